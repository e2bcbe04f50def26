import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../errors.js';
import { classifyAttemptFailure, describeError, type AttemptFailure } from './classifyAttemptFailure.js';
import { catalogUnavailable } from '../state/collectToolPages.js';
import { listWithV1, listWithV2, type Listing, type ListingContext } from './listWithClients.js';
import type { ListedSurface } from '../wire/listedSurfaces.js';
import { openStdioChild, type StdioLaunch } from './openUpstream.js';
import { bearerFetch } from './bearerFetch.js';
import type { UpstreamOAuth } from './upstreamOAuth.js';
import { redactUrl, redactUrlsInText } from '../wire/redactUrl.js';
import { DEFAULT_MAX_PAGES, DEFAULT_TIMEOUT_MS } from '../defaults.js';
import { describeUpstreamUrl } from '../config/upstreamKind.js';
import { moveUrlCredentials } from '../config/urlCredentials.js';

/** How an HTTP upstream is listed: one transport, or `auto` to detect a legacy HTTP+SSE server. */
export type LiveHttpTransport = 'streamable-http' | 'sse' | 'auto';

/** Where the live catalog is listed: a URL (with headers), or a command spawned over stdio. */
export type LiveTarget =
  | {
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
      /**
       * `auto` tries Streamable HTTP, then the 2024-11-05 HTTP+SSE transport as the MCP spec tells
       * clients to (see {@link fetchLiveCatalog}); a transport named is the only one tried.
       * @default 'auto'
       */
      readonly transport?: LiveHttpTransport;
      /** Set when `headers.authorization` came from the userinfo of a pin's URL (shown `[redacted]@`). */
      readonly authorizationFromUrl?: true;
      /** A pin with `auth.mode: client`: the bearer comes from its token store (Streamable HTTP only). */
      readonly oauth?: UpstreamOAuth;
    }
  /** `env` is added to the SDK's default child environment (PATH, HOME, …); nothing else of ours is passed. */
  | StdioLaunch;

/** Options of {@link fetchLiveCatalog}. */
export interface LiveCatalogOptions {
  /** Client capabilities declared at initialize: some servers list tools per capability. */
  readonly capabilities?: ClientCapabilities;
  /** @default 30000 */
  readonly timeoutMs?: number;
  /** @default 1000 */
  readonly maxPages?: number;
  /** A relative stdio `cwd` is resolved against this folder (the pin file's). */
  readonly baseDir?: string;
  /** Surfaces listed besides tools (every page), each only when the server offers it. @default [] */
  readonly surfaces?: readonly Exclude<ListedSurface, 'tools'>[];
}

/** A whole catalog, every page of it, as the server listed it (raw values), with its instructions and the other surfaces asked for. */
export interface LiveCatalog extends Listing {
  readonly tools: unknown[];
  readonly pages: number;
  /** The protocol revision spoken, when the client reports it. */
  readonly protocolVersion: string | undefined;
  /** The transport the catalog was listed over. */
  readonly transport: 'streamable-http' | 'sse' | 'stdio';
  /** Set when `auto` detected HTTP+SSE, saying why ("the Streamable HTTP initialize was answered HTTP 404"). */
  readonly detection?: string;
}

interface Context extends ListingContext {
  readonly baseDir: string | undefined;
}

/** One transport's attempt: the catalog, or why it could not connect. */
type Attempt =
  { readonly catalog: LiveCatalog } | { readonly failure: AttemptFailure; readonly error: unknown };

async function attempt(list: () => Promise<LiveCatalog>): Promise<Attempt> {
  for (let tries = 1; ; tries++) {
    try {
      return { catalog: await list() };
    } catch (error) {
      // A GatewayError comes after the handshake: the server speaks this transport and its listing failed.
      if (error instanceof GatewayError) throw error;
      // fetch keeps connections alive between requests of one process (toolpin review lists again,
      // tests run commands in-process): one the server closed while idle fails the first request
      // sent on it with a reset. One more try goes out on a fresh connection.
      if (tries === 1 && wasReset(error)) continue;
      return { failure: classifyAttemptFailure(error), error };
    }
  }
}

/** True when a connection reset (ECONNRESET) is among the causes of a failed fetch. */
function wasReset(error: unknown): boolean {
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && typeof cause === 'object' && cause !== null; depth++) {
    if ((cause as { code?: unknown }).code === 'ECONNRESET') return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

// Servers answer 404s with whole HTML pages: one line of the reason is enough to tell what happened.
function outcome(label: string, failure: AttemptFailure): string {
  const reason = failure.reason.replace(/\s+/g, ' ').trim();
  const short = reason.length > 200 ? `${reason.slice(0, 200)}…` : reason;
  return failure.status === undefined
    ? `${label} failed: ${short}`
    : `${label} answered ${failure.status} (${short})`;
}

// A 401 without client mode: the server may want OAuth, which toolpin does as a client once logged in.
function authProblem(status: number | undefined, clientMode: boolean): string {
  const hint =
    status === 401 && !clientMode
      ? ' (a server behind OAuth: give its pin file auth: { mode: client } and run toolpin login <pin-file>, docs/oauth-client.md)'
      : '';
  return `; HTTP ${status} is an authorization problem, not a transport one${hint}`;
}

/** Streamable HTTP (2025 initialize, then 2026-07-28), then HTTP+SSE when allowed and the spec says so. */
async function listOverHttp(
  target: Extract<LiveTarget, { url: string }>,
  context: Context,
): Promise<LiveCatalog> {
  const choice = target.transport ?? 'auto';
  const url = new URL(target.url);
  const requestInit = { headers: { ...target.headers } };
  // Client mode: no token (or metadata refused) is told at once, as the GatewayError it is.
  if (target.oauth !== undefined) await target.oauth.accessToken();
  const authorized = target.oauth === undefined ? {} : { fetch: bearerFetch(target.oauth) };
  const shown = describeUpstreamUrl(target.url, target.authorizationFromUrl === true);
  const outcomes: string[] = [];
  let detection: string | undefined;
  const fail = (last: Extract<Attempt, { failure: AttemptFailure }>, hint = ''): GatewayError =>
    catalogUnavailable(
      redactUrlsInText(`cannot connect to ${shown}: ${outcomes.join('; ')}${hint}`),
      { stage: 'connect', transport: choice, status: last.failure.status ?? null },
      last.error,
    );
  if (choice !== 'sse') {
    const v1 = await attempt(async () => ({
      ...(await listWithV1(new StreamableHTTPClientTransport(url, { requestInit, ...authorized }), context)),
      transport: 'streamable-http',
    }));
    if ('catalog' in v1) return v1.catalog;
    outcomes.push(outcome('Streamable HTTP', v1.failure));
    // 401/403: the server is there and wants credentials; no other transport or revision changes that.
    if (v1.failure.kind === 'auth')
      throw fail(v1, authProblem(v1.failure.status, target.oauth !== undefined));
    if (v1.failure.kind === 'network') throw fail(v1);
    const v2 = await attempt(async () => ({
      ...(await listWithV2({ ...target, ...authorized }, context)),
      transport: 'streamable-http',
    }));
    if ('catalog' in v2) return v2.catalog;
    outcomes.push(outcome('a 2026-07-28 client', v2.failure));
    if (v2.failure.kind === 'auth')
      throw fail(v2, authProblem(v2.failure.status, target.oauth !== undefined));
    // The spec's fallback: only an initialize POST answered 400, 404 or 405 means "try the old transport".
    if (choice === 'streamable-http' || v1.failure.kind !== 'refused' || v2.failure.kind === 'network')
      throw fail(
        v2,
        choice === 'streamable-http' && v1.failure.kind === 'refused'
          ? '; HTTP+SSE not tried (transport streamable-http was named)'
          : '',
      );
    detection = `the Streamable HTTP initialize was answered HTTP ${v1.failure.status}`;
  }
  const sse = await attempt(async () => ({
    ...(await listWithV1(new SSEClientTransport(url, { requestInit }), context)),
    transport: 'sse',
  }));
  if ('catalog' in sse) return detection === undefined ? sse.catalog : { ...sse.catalog, detection };
  outcomes.push(outcome('HTTP+SSE', sse.failure));
  throw fail(sse);
}

async function listOverStdio(target: StdioLaunch, context: Context): Promise<LiveCatalog> {
  const command = target.command[0] ?? '';
  // The child's stderr is the user's to read, line by line as it wrote it.
  const transport = openStdioChild(target, {
    ...(context.baseDir === undefined ? {} : { baseDir: context.baseDir }),
    onStderrLine: (line) => process.stderr.write(`${line}\n`),
  });
  try {
    return { ...(await listWithV1(transport, context)), transport: 'stdio' };
  } catch (error) {
    // The listing's own failure passes as it is; a child that cannot start or ends is "cannot connect".
    if (error instanceof GatewayError && error.code === 'GW_CATALOG_UNAVAILABLE') throw error;
    throw catalogUnavailable(
      `cannot connect to command ${command}: ${describeError(error)}`,
      { stage: 'connect' },
      error,
    );
  }
}

/**
 * Lists a server's whole catalog as a real MCP client: initialize (its instructions kept), then
 * every tools/list page, following nextCursor, then every page of each surface of
 * `options.surfaces` the server's capabilities offer. A URL is tried in this order, each step only when the one before could not
 * connect: (1) Streamable HTTP with the SDK v1 client (2025 initialize); (2) the SDK v2 client,
 * which negotiates 2026-07-28; (3) with transport `auto` only, and only when (1) was answered HTTP
 * 400, 404 or 405, the 2024-11-05 HTTP+SSE transport (GET, `endpoint` event), the fallback the MCP
 * spec gives clients. No network error, 401 or 403 goes further: the server is not there, or wants
 * credentials. `transport: 'sse'` tries (3) alone. Rejects with GatewayError GW_CATALOG_UNAVAILABLE
 * saying what each step was answered, or when the listing is incomplete; a partial catalog is never
 * returned.
 */
export async function fetchLiveCatalog(
  target: LiveTarget,
  options: LiveCatalogOptions = {},
): Promise<LiveCatalog> {
  const context: Context = {
    capabilities: options.capabilities,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxPages: options.maxPages ?? DEFAULT_MAX_PAGES,
    baseDir: options.baseDir,
    ...(options.surfaces === undefined ? {} : { surfaces: options.surfaces }),
  };
  return 'command' in target
    ? listOverStdio(target, context)
    : listOverHttp(withoutUserinfo(target), context);
}

// fetch refuses a URL with userinfo: it is sent as the Basic credential it stands for, as the
// gateway does with a pin's URL (config/urlCredentials.ts).
function withoutUserinfo(target: Extract<LiveTarget, { url: string }>): Extract<LiveTarget, { url: string }> {
  if (!URL.canParse(target.url)) return target;
  const moved = moveUrlCredentials(target.url, target.headers);
  if ('problem' in moved)
    throw catalogUnavailable(`cannot use ${redactUrl(target.url)}: expected ${moved.problem}`, {
      stage: 'connect',
    });
  return moved.moved
    ? { ...target, url: moved.url, headers: moved.headers, authorizationFromUrl: true }
    : target;
}
