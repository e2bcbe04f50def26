import type { RestrictedPrompt, RestrictedTemplate, RestrictedTool } from '@toolpin/digest';
import type { ExtraMembers } from '../explain/extraMembers.js';
import type { AuthConfig } from './authSchema.js';
import type { SignaturePolicy } from './pinSignature.js';
import type { VerifiedManifest } from './catalogManifest.js';

export type { AuthConfig } from './authSchema.js';

/** What the gateway does when a catalog disagrees with its pin: `enforce` blocks, `monitor` only reports. */
export type Mode = 'enforce' | 'monitor';

/** How drift is contained in enforce mode: hide and block only the drifted tools, or block the whole server. */
export type OnDrift = 'filter' | 'block-server';

/** What enforce mode does with a drift of one severity: {@link OnDrift}, or (low only) `flag`: serve and allow it, flagged. */
export type DriftAction = OnDrift | 'flag';

/** `onDrift` per severity (docs/drift-severity.md): `{ high: filter, low: flag }`. */
export interface DriftPolicy {
  readonly high: OnDrift;
  readonly low: DriftAction;
}

/** `onDrift` as written in a pin file: one action for every drift (`filter`), or one per severity. */
export type OnDriftSetting = OnDrift | DriftPolicy;

/** The wire protocol spoken to an HTTP upstream. */
export type HttpTransport = 'streamable-http' | 'sse';

/**
 * A pin file's `validate`: `strict` (every tool), or per tool key `false` (its calls and results
 * are not checked against its pinned schemas), `true` (checked, the default) or `strict`.
 */
export type ValidateConfig = 'strict' | Readonly<Record<string, boolean | 'strict'>>;

/** An MCP server reached over HTTP. */
export interface HttpUpstreamConfig {
  /** The pin's `upstream.url` without its userinfo (which is in `headers`, see `authorizationFromUrl`). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly transport: HttpTransport;
  /**
   * Set when the pin's `upstream.url` had userinfo: it is sent as `authorization: Basic …` in
   * `headers`, and descriptions of the upstream show `[redacted]@`.
   */
  readonly authorizationFromUrl?: true;
}

/** An MCP server the gateway spawns and speaks to over its stdin/stdout. */
export interface StdioUpstreamConfig {
  /** The program and its first arguments (`[node, server.js]`); a string in the file is one program. */
  readonly command: readonly [string, ...string[]];
  /** Arguments after `command`. */
  readonly args: readonly string[];
  /** Added to the few variables a child inherits (PATH, HOME, …); the gateway's own environment is not passed. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * The variables passed on from the environment toolpin runs in (a desktop client's, for wrap; the
   * gateway's or the shell's otherwise), by name: a pin written by protect holds no env values.
   * A pin file always has it (`[]` when absent). @default []
   */
  readonly passEnv?: readonly string[];
  /** Working directory; a relative one is resolved against the pin file's folder. @default the gateway's */
  readonly cwd?: string;
}

/** Where a pinned server is: a URL, or a command to spawn (told apart by `url` vs `command`). */
export type UpstreamConfig = HttpUpstreamConfig | StdioUpstreamConfig;

/** The approved listing of a surface other than tools: its folded digest and the per-key digests it folds. */
export interface SurfacePinConfig {
  readonly catalog: string;
  /**
   * Key (`prompt:<name>`, `template:<uriTemplate>`) -> the item's digest, every item (a pin file
   * written before the per-item map may hold the surface's overflow key instead of those beyond 500).
   */
  readonly items: Readonly<Record<string, string>>;
  /** Beyond 500 items: the digest of the fold's overflow entry (`prompts:overflow`, `templates:overflow`). */
  readonly overflow?: string;
}

/**
 * The approved catalog: its folded digest and the per-key tool digests it folds; optionally the
 * prompts, the resource templates and the server's instructions (docs/pin-surfaces.md). A surface
 * absent here is not pinned, so not enforced (a pin file written before issue 14 pins tools only).
 */
export interface PinConfig {
  /** The published catalog digest: the fold of `tools`, with its overflow rule (docs/pin-lifecycle.md). */
  readonly catalog: string;
  /**
   * Key -> the tool's own digest, every tool (so each call is checked per tool, whatever the size
   * of the catalog). A pin file written before this map may hold `tools:overflow` in place of the
   * tools beyond the first 500: those tools are not pinned one by one.
   */
  readonly tools: Readonly<Record<string, string>>;
  /** Beyond 500 tools: the digest of the fold's `tools:overflow` entry (what `catalog` folds in). */
  readonly overflow?: string;
  /** The pinned prompts (`prompts/list`); absent: prompts not pinned. */
  readonly prompts?: SurfacePinConfig;
  /** The pinned resource templates (`resources/templates/list`); absent: not pinned. */
  readonly resourceTemplates?: SurfacePinConfig;
  /** digestInstructions of the pinned instructions (the digest of none pins their absence); absent: not pinned. */
  readonly instructions?: string;
  /**
   * What serves the catalog (docs/pin-lifecycle.md#the-artifact): a package, a file, an image, or
   * what an HTTP server states. Beside the digests, never folded into `catalog`. Absent: not pinned.
   */
  readonly artifact?: PinnedArtifact;
}

/** An npm package run by `npx` or `pnpm dlx`, as npm resolved it: exact version and registry integrity (SRI). */
export interface NpmArtifact {
  readonly kind: 'npm';
  readonly package: string;
  readonly version: string;
  readonly integrity: string;
}

/** A local program or script: its absolute path and the SHA-256 of its bytes (for `node x.js`, the entry file). */
export interface FileArtifact {
  readonly kind: 'file';
  readonly path: string;
  readonly sha256: string;
}

/** The image of a `docker run`: the reference as written and the image id (`sha256:…`) it resolved to. */
export interface DockerArtifact {
  readonly kind: 'docker';
  readonly image: string;
  readonly id: string;
}

/** An HTTP upstream: what it states (initialize's `serverInfo`), pinned by value. */
export interface ServerInfoArtifact {
  readonly kind: 'server';
  readonly name: string;
  readonly version: string;
}

/** What a pin records of the code behind its catalog (see {@link PinConfig.artifact}). */
export type PinnedArtifact = NpmArtifact | FileArtifact | DockerArtifact | ServerInfoArtifact;

/** An alert event a webhook can subscribe to. */
export type AlertEventName = 'catalog.verified' | 'catalog.drift' | 'call.blocked' | 'call.flagged';

/** One webhook receiving alert events, signed with HMAC-SHA256 (see observe/webhookSink). */
export interface WebhookConfig {
  readonly url: string;
  /** The HMAC key (read from the environment when `secretEnv` is set). Never logged. */
  readonly secret: string;
  /** The environment variable the secret was read from; written back instead of the secret. */
  readonly secretEnv?: string;
  /** Label in logs and metrics. @default the URL's host */
  readonly name?: string;
  /** @default ['catalog.drift', 'call.blocked', 'call.flagged'] */
  readonly events: readonly AlertEventName[];
  /**
   * `high`: drift events carry only their high findings (none: not sent), and calls refused or
   * flagged for a low drift are not sent. Absent: every severity.
   */
  readonly minSeverity?: 'high' | 'low';
  /** @default 5 */
  readonly maxAttempts: number;
  /** @default 5000 */
  readonly timeoutMs: number;
  /** @default 1000 */
  readonly queueSize: number;
}

/** Where alert events go beside the log: the gateway file's block, or a pin file's own. */
export interface AlertsConfig {
  readonly webhooks: readonly WebhookConfig[];
  /** Gateway file only: repeat window of identical catalog events, in seconds. @default 300 */
  readonly dedupeSeconds?: number;
  /** Gateway file only: aggregation window of call events, in seconds. @default 10 */
  readonly aggregateSeconds?: number;
}

/** One pinned upstream server, as parsed from its pin file. */
export interface ServerConfig {
  readonly name: string;
  /** Absolute path of the pin file (or the label given to {@link parseServerConfig}). */
  readonly file: string;
  readonly upstream: UpstreamConfig;
  /**
   * The client capabilities declared at initialize when the catalog was pinned (`pin --capabilities`):
   * `check` and `approve` declare them (unless given `--capabilities`), and so does the gateway's own
   * upstream session (2026-07-28 clients on a bridged route). Absent: none were declared.
   */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
  readonly mode: Mode;
  readonly profile: string;
  /** As written (a single action applies to both severities; see config/driftPolicy). */
  readonly onDrift: OnDriftSetting;
  readonly pin: PinConfig;
  /** Key -> the six hashed members of the pinned definition (explains drift). Tool keys only. */
  readonly definitions: Readonly<Record<string, RestrictedTool>>;
  /** `prompt:` key -> the pinned prompt's hashed members (explains drift); `{}` when none. */
  readonly promptDefinitions: Readonly<Record<string, RestrictedPrompt>>;
  /** `template:` key -> the pinned resource template's hashed members; `{}` when none. */
  readonly templateDefinitions: Readonly<Record<string, RestrictedTemplate>>;
  /** The pinned text of the server's instructions, when `pin.instructions` pins a text and the file records it. */
  readonly instructions?: string;
  /**
   * Key -> the other members of the pinned definition, pinned by value; absent for a key whose
   * definition records none (its tools reach clients with the six hashed members only).
   */
  readonly extraMembers: Readonly<Record<string, ExtraMembers>>;
  /**
   * A tools/call result whose `structuredContent` does not fit the pinned `outputSchema`: `flag`
   * reports it (call.flagged), `block` replaces it with a -32040 `output_invalid` error. @default 'flag'
   */
  readonly onBadOutput?: 'flag' | 'block';
  /**
   * How calls and results are checked against the pinned schemas: `strict` for every tool, or per
   * key `false` (not checked), `true` (checked; null for a declared, non-required property read as
   * absent) or `strict` (checked; null is a value). @default {} (every tool `true`)
   */
  readonly validate?: ValidateConfig;
  /** This server's own webhooks (beside the gateway's); absent when the pin file has none. */
  readonly alerts?: AlertsConfig;
  /** How the route's credentials work (docs/oauth.md); absent: transparent. */
  readonly auth?: AuthConfig;
  /** Set when the pin file says `pin: trust-on-first-use`: `pin` is empty until the first complete observation is written. */
  readonly trustOnFirstUse?: true;
  /**
   * Catalogs pinned per principal (docs/scopes.md#pins-per-principal), each verified as the file's
   * own: a session speaking for a principal is checked against its entry. Absent: one catalog for all.
   */
  readonly principalPins?: Readonly<Record<string, PinnedCatalog>>;
  /** A principal with no entry in `principalPins` is trusted on first use into its own (else refused). */
  readonly principalFirstUse?: true;
  /** The kid of the trusted key whose signature was verified at load (docs/pin-lifecycle.md#signed-approvals). */
  readonly signedBy?: string;
  /** Where the first approval came from, when a signed catalog manifest gave it (docs/manifests.md). */
  readonly approvedBy?: ApprovedBy;
  /**
   * With `trustOnFirstUse`: the pin file's `firstUseManifest`, verified at load by a gateway; the
   * first complete listing becomes the pin only if its tools are the manifest's. Parsed without the
   * gateway's keys (a CLI reading the file), `{unverified: path}`: nothing is pinned from it.
   */
  readonly firstUseManifest?: VerifiedManifest | { readonly unverified: string };
}

/** The pin file's `approvedBy`: the catalog manifest its first approval was taken from. */
export interface ApprovedBy {
  readonly via: 'manifest';
  /** The kid of the key that signed the manifest. */
  readonly kid: string;
  /** `sha256:` of the manifest's statement (RFC 8785). */
  readonly manifest: string;
  /** Where the manifest was read from. */
  readonly source: string;
  /** The server the manifest names (`name@version`). */
  readonly server?: string;
}

/** What the admin listener's review page offers (`admin.ui`). */
export type AdminUiMode = 'review' | 'readonly' | 'off';

/** One catalog of a pin file: what a principal's entry holds (and the file's own, beside its other settings). */
export type PinnedCatalog = Pick<
  ServerConfig,
  'pin' | 'definitions' | 'promptDefinitions' | 'templateDefinitions' | 'instructions' | 'extraMembers'
>;

/** The gateway file, with its servers folder loaded. */
export interface GatewayConfig {
  /** Absolute path of the gateway file. */
  readonly file: string;
  readonly listen: { readonly host: string; readonly port: number };
  readonly admin: {
    readonly host: string;
    readonly port: number;
    readonly token?: string;
    /**
     * The review page at `/ui` (docs/review-ui.md): `review` shows the actions (approve, keep
     * blocked; they need the token), `readonly` hides and refuses them, `off` does not serve it.
     * @default 'review'
     */
    readonly ui?: AdminUiMode;
  };
  /** Absolute path of the folder of pin files. */
  readonly serversDir: string;
  readonly limits: {
    readonly maxBodyBytes: number;
    readonly upstreamTimeoutMs: number;
    readonly streamIdleMs: number;
  };
  /**
   * `revalidateMs`: a tools/call decided from an observation older than this lists upstream first
   * (replicas without stickiness: 0). `bridgedPerClient` (default 8): bridged sessions one client
   * (credential, else remote address) may hold per server. `bridgedPerAddress` (default 32): bridged
   * sessions one remote address may hold per server, whatever credentials it sends.
   * `bridgedIdleSeconds` (default 300, at most `ttlSeconds`): a bridged session with no request and
   * no open stream for this long is closed.
   */
  readonly sessions: {
    readonly max: number;
    readonly ttlSeconds: number;
    readonly revalidateMs?: number;
    readonly bridgedPerClient?: number;
    readonly bridgedPerAddress?: number;
    readonly bridgedIdleSeconds?: number;
  };
  readonly log: { readonly level: LogLevel };
  readonly servers: readonly ServerConfig[];
  /** `requireSignature` and the `trustedKeys` read; absent when the gateway file names neither. */
  readonly signatures?: SignaturePolicy;
  /** Webhooks for every server's alert events; absent when not configured. */
  readonly alerts?: AlertsConfig;
  /** SIGTERM: how long in-flight requests may take to finish. Absent = 10000 ms. */
  readonly shutdown?: { readonly graceMs: number };
  /** Browser clients allowed to call the MCP routes; absent: no CORS (preflights are refused). */
  readonly cors?: CorsConfig;
  /** OpenTelemetry traces (docs/telemetry.md); absent: the OTEL_* environment variables decide. */
  readonly telemetry?: TelemetryConfig;
  /** The aggregate route `/mcp` (docs/aggregate.md); absent: not served. */
  readonly aggregate?: AggregateConfig;
  /** Who a request speaks for and what each may see and use (docs/scopes.md); absent: no scopes. */
  readonly principals?: readonly PrincipalConfig[];
  /**
   * Set when one pin file is served without a gateway file (`toolpin serve --pin`): `file` is that
   * pin file, `serversDir` its folder, and only this file of the folder is served and reloaded.
   */
  readonly pinFile?: string;
}

/** The items of one surface a principal may see and use: every one, or those its names and globs match. */
export type ScopeItems = '*' | readonly string[];

/** The items of one server a principal may see and use, per surface. */
export type ServerScopeConfig = Readonly<Record<'tools' | 'prompts' | 'resourceTemplates', ScopeItems>>;

/** One principal of the gateway file's `principals` block (docs/scopes.md): how it is recognized, what it may use. */
export interface PrincipalConfig {
  readonly name: string;
  /** Recognized by a static API key (`X-Toolpin-Key`): the SHA-256 of the key, hex (the key is never kept). */
  readonly apiKeySha256?: string;
  /** Recognized by a verified token (resource-server routes): every member written must match. */
  readonly oauth?: {
    readonly issuer?: string;
    readonly sub?: string;
    readonly clientId?: string;
    readonly scopes?: readonly string[];
  };
  /** The stdio front's local user: `true` for whoever runs `toolpin wrap`, or that user name. */
  readonly local?: true | string;
  /** Server names or globs, each with the items of each surface the principal may see and use. */
  readonly servers: Readonly<Record<string, ServerScopeConfig>>;
}

/** The gateway file's `aggregate` block (docs/aggregate.md). */
export interface AggregateConfig {
  /** The member servers, by name; absent: every server (resource-server routes aside). */
  readonly servers?: readonly string[];
  /** Between a member's prefix and an item's own name. @default '__' */
  readonly separator: string;
  /** A member's prefix when it is not the server's name. */
  readonly prefixes?: Readonly<Record<string, string>>;
  /** Said first in the aggregate's instructions, before each member's. */
  readonly instructions?: string;
}

/** The gateway file's `cors` block (docs/operations.md, docs/boundary.md). */
export interface CorsConfig {
  /** Origins allowed (`https://app.example.com`), or `*` for any. */
  readonly origins: readonly string[];
  /** Allow credentials (cookies, HTTP authentication); never with `*`. @default false */
  readonly credentials: boolean;
  /** How long a browser may cache a preflight answer, in seconds. @default 600 */
  readonly maxAgeSeconds: number;
}

/** The gateway file's `telemetry` block: each key absent defers to the standard OTEL_* variable. */
export interface TelemetryConfig {
  /** `otlp`: spans exported over OTLP/HTTP; `none`: off. Absent: OTEL_TRACES_EXPORTER decides. */
  readonly traces?: 'otlp' | 'none';
  /** The OTLP/HTTP traces URL. Absent: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint?: string;
  /** `service.name` of the spans. Absent: OTEL_SERVICE_NAME, else `toolpin`. */
  readonly serviceName?: string;
}

/** Log levels accepted in the gateway file (pino's). */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

/** What {@link serializePinFile} needs: a {@link ServerConfig} or the same shape with defaults left out. */
export interface PinFileInput {
  readonly name: string;
  readonly upstream:
    | {
        readonly url: string;
        /** @default {} */
        readonly headers?: Readonly<Record<string, string>>;
        /** @default 'streamable-http' */
        readonly transport?: HttpTransport;
      }
    | {
        readonly command: string | readonly string[];
        /** @default [] */
        readonly args?: readonly string[];
        /** @default {} */
        readonly env?: Readonly<Record<string, string>>;
        /** @default [] */
        readonly passEnv?: readonly string[];
        readonly cwd?: string;
      };
  /** Written only when present. */
  readonly clientCapabilities?: Readonly<Record<string, unknown>>;
  /** @default 'enforce' */
  readonly mode?: Mode;
  /** @default TRACE_PROFILE */
  readonly profile?: string;
  /** @default 'filter' */
  readonly onDrift?: OnDriftSetting;
  readonly pin: PinConfig;
  /** @default {} */
  readonly definitions?: Readonly<Record<string, RestrictedTool>>;
  /** Written into `definitions` beside the tools (keys `prompt:`). @default {} */
  readonly promptDefinitions?: Readonly<Record<string, RestrictedPrompt>>;
  /** Written into `definitions` beside the tools (keys `template:`). @default {} */
  readonly templateDefinitions?: Readonly<Record<string, RestrictedTemplate>>;
  /** The instructions text, written at the top level when present. */
  readonly instructions?: string;
  /** Written into each key's definition after the six hashed members. @default {} */
  readonly extraMembers?: Readonly<Record<string, ExtraMembers>>;
  /** Written only when `block`. @default 'flag' */
  readonly onBadOutput?: 'flag' | 'block';
  /** Written only when it is `strict` or names a tool. @default {} */
  readonly validate?: ValidateConfig;
  /** Written only when present. */
  readonly alerts?: AlertsConfig;
  /** Written only when present (absent: transparent). */
  readonly auth?: AuthConfig;
  /** Writes `pin: trust-on-first-use` instead of `pin`. */
  readonly trustOnFirstUse?: true;
  /** Written only when present. */
  readonly approvedBy?: ApprovedBy;
}
