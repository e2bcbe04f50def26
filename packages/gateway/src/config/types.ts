import type { RestrictedTool } from '@toolpin/digest';

/** What the gateway does when a catalog disagrees with its pin: `enforce` blocks, `monitor` only reports. */
export type Mode = 'enforce' | 'monitor';

/** How drift is contained in enforce mode: hide and block only the drifted tools, or block the whole server. */
export type OnDrift = 'filter' | 'block-server';

/** The wire protocol spoken to an HTTP upstream. */
export type HttpTransport = 'streamable-http' | 'sse';

/** An MCP server reached over HTTP (the only upstream kind for now; a stdio variant will join it in a union). */
export interface UpstreamConfig {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly transport: HttpTransport;
}

/** The approved catalog: its folded digest and the per-key tool digests it folds. */
export interface PinConfig {
  readonly catalog: string;
  readonly tools: Readonly<Record<string, string>>;
}

/** One pinned upstream server, as parsed from its pin file. */
export interface ServerConfig {
  readonly name: string;
  /** Absolute path of the pin file (or the label given to {@link parseServerConfig}). */
  readonly file: string;
  readonly upstream: UpstreamConfig;
  readonly mode: Mode;
  readonly profile: string;
  readonly onDrift: OnDrift;
  readonly pin: PinConfig;
  readonly definitions: Readonly<Record<string, RestrictedTool>>;
}

/** The gateway file, with its servers folder loaded. */
export interface GatewayConfig {
  /** Absolute path of the gateway file. */
  readonly file: string;
  readonly listen: { readonly host: string; readonly port: number };
  readonly admin: { readonly host: string; readonly port: number; readonly token?: string };
  /** Absolute path of the folder of pin files. */
  readonly serversDir: string;
  readonly limits: { readonly maxBodyBytes: number; readonly upstreamTimeoutMs: number };
  readonly sessions: { readonly max: number; readonly ttlSeconds: number };
  readonly log: { readonly level: LogLevel };
  readonly servers: readonly ServerConfig[];
}

/** Log levels accepted in the gateway file (pino's). */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

/** What {@link serializePinFile} needs: a {@link ServerConfig} or the same shape with defaults left out. */
export interface PinFileInput {
  readonly name: string;
  readonly upstream: {
    readonly url: string;
    /** @default {} */
    readonly headers?: Readonly<Record<string, string>>;
    /** @default 'streamable-http' */
    readonly transport?: HttpTransport;
  };
  /** @default 'enforce' */
  readonly mode?: Mode;
  /** @default TRACE_PROFILE */
  readonly profile?: string;
  /** @default 'filter' */
  readonly onDrift?: OnDrift;
  readonly pin: PinConfig;
  /** @default {} */
  readonly definitions?: Readonly<Record<string, RestrictedTool>>;
}
