import { createRequire } from 'node:module';

// The defaults and constants the gateway and the CLI share, each named once. A number that
// appears in two places has its name and its home here (pure values: any floor may import them).

/** Bound on one request to an upstream (and on each page the gateway lists itself), in ms. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Bound on the pages of one tools/list listing: a server that pages forever is refused. */
export const DEFAULT_MAX_PAGES = 1000;

/** Bound on one upstream answer the gateway reads whole (a JSON body, one SSE event), in bytes. */
export const DEFAULT_MAX_UPSTREAM_BYTES = 64 * 1024 * 1024;

// Read at run time from the package's own manifest (src/ and dist/ both sit beside it), so the
// version the gateway announces is the one published.
const manifest = createRequire(import.meta.url)('../package.json') as { readonly version: string };

/** The `clientInfo` the gateway and the CLI announce at initialize when they act as a client. */
export const CLIENT_INFO: { readonly name: string; readonly version: string } = Object.freeze({
  name: 'toolpin',
  version: manifest.version,
});

/** The exit codes of the `toolpin` commands (documented in docs/pin-lifecycle.md and the README). */
export const ExitCodes = {
  /** Done; `check` and `diff`: the catalogs are equal. */
  OK: 0,
  /** `check` and `diff`: drift was found. */
  DRIFT: 1,
  /** `approve`: the change was declined. */
  DECLINED: 1,
  /** `serve` and `wrap`: failed while running, or stopped by a second signal / the upstream ending; `protect`: a server could not be pinned. */
  FAILED: 1,
  /** Bad input: an unreadable file, a bad option, a config that does not parse, a gateway that cannot start. */
  BAD_INPUT: 2,
  /** `check`: the state is unknown (the live catalog could not be listed). */
  UNKNOWN: 2,
  /** Every command but serve, wrap and review: stopped by SIGINT (Ctrl-C), 128 + 2 as shells report it. */
  INTERRUPTED: 130,
  /** Every command but serve, wrap and review: stopped by SIGTERM, 128 + 15. */
  TERMINATED: 143,
} as const;

/** Bound on one client request body the gateway reads, in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Bound on one message of a bridged upstream (a stdio line, an HTTP+SSE event), in bytes. */
export const DEFAULT_MAX_BRIDGED_MESSAGE_BYTES = 10 * 1024 * 1024;

/** Silence allowed on an upstream answer that still owes answers before it ends, in ms. */
export const DEFAULT_STREAM_IDLE_MS = 300_000;

/**
 * Messages waiting to reach a bridged client, in characters of JSON, past which the upstream is no
 * longer read (a stdio child's stdout, an HTTP+SSE stream) until they fall to the low mark: a
 * client that reads slowly holds the upstream back instead of the gateway holding everything.
 * 4 MiB: a few hundred notifications and a large listing page pass without stopping, and two
 * sessions' queues stay small beside the 10 MiB one message may take.
 */
export const DEFAULT_CLIENT_QUEUE_HIGH_BYTES = 4 * 1024 * 1024;

/** Reading the upstream resumes once the client's queue is under this many characters. */
export const DEFAULT_CLIENT_QUEUE_LOW_BYTES = 1024 * 1024;

/** The same bounds in messages (each queued message costs more than its text: a flood of small ones). */
export const CLIENT_QUEUE_HIGH_MESSAGES = 1024;
export const CLIENT_QUEUE_LOW_MESSAGES = 256;

/**
 * The gateway's own answers to a bridged client (refusals) waiting for it, in characters of JSON,
 * past which what the client sends is not read until they fall under the low mark: a client that
 * sends what is refused and does not read is held back, as the upstream is past its own marks.
 */
export const CLIENT_OWN_ANSWERS_HIGH_BYTES = 256 * 1024;
export const CLIENT_OWN_ANSWERS_LOW_BYTES = 64 * 1024;

/** Longest the last answers of a session whose upstream ended may take to reach the client, in ms. */
export const CLIENT_FLUSH_MS = 1000;

/** How long an aggregate member that could not be started is left down before it is tried again, in ms. */
export const AGGREGATE_MEMBER_RETRY_MS = 5_000;

/** The header a client sends its static API key in (docs/scopes.md); never forwarded upstream, never logged. */
export const PRINCIPAL_KEY_HEADER = 'x-toolpin-key';

/** The folder of pin files a command writes to when given none, under the user's home (`~/.toolpin`). */
export const DEFAULT_PINS_FOLDER = '.toolpin';

/** The file of OAuth tokens (`toolpin login`), in the toolpin folder (`~/.toolpin`), mode 0600. */
export const OAUTH_TOKENS_FILE = 'oauth-tokens.json';

/** Bound on one fetch of OAuth metadata, JWKS, introspection or a token endpoint (resource-server mode), in ms. */
export const AUTH_FETCH_TIMEOUT_MS = 10_000;

/** Bound on one OAuth metadata, JWKS, introspection or token answer the gateway reads, in bytes. */
export const AUTH_MAX_RESPONSE_BYTES = 256 * 1024;

/** Upstream credentials (exchanged or client-credentials tokens) kept at once, per route. */
export const AUTH_TOKEN_CACHE_MAX = 1000;

/**
 * MCP sessions of one resource-server route whose principal the gateway remembers (the least
 * recently used is forgotten first; its next use claims it again). Issued ids and ids claimed on
 * first use are each remembered up to this many.
 */
export const AUTH_SESSION_OWNERS_MAX = 10_000;

/** A cached upstream token is renewed this long before its expiry, in seconds. */
export const AUTH_TOKEN_RENEW_SECONDS = 30;

/** An access token this close to its expiry is refreshed before it is used, in ms. */
export const OAUTH_EXPIRY_MARGIN_MS = 30_000;

/** How long `toolpin login` waits for the browser's redirect, in ms. */
export const DEFAULT_LOGIN_TIMEOUT_MS = 300_000;

/**
 * Bound on a value checked against a pinned schema (a call's arguments, a result's
 * `structuredContent`), in bytes of its JSON: a larger one is not validated but refused as
 * unverifiable (docs/boundary.md#validation-bounds).
 */
export const DEFAULT_MAX_CHECKED_BYTES = 4 * 1024 * 1024;

/**
 * Bound on the work of `uniqueItems` (it compares every pair of items): when a pinned schema uses
 * it, the sum over the value's arrays of items × the array's JSON bytes. About 30 ms of CPU at
 * most; past it the value is not validated but refused as unverifiable.
 */
export const DEFAULT_MAX_UNIQUE_ITEMS_WORK = 16 * 1024 * 1024;

/**
 * Bound on the work of validating one value against a pinned schema, beside
 * {@link DEFAULT_VALIDATION_WORK_FACTOR} × the value's weight: each application of a subschema to
 * a value counts 1 plus the value's items, members or characters (`const`, `enum` and
 * `uniqueItems` count what they compare, gathered errors count 4 each). A schema that applies its
 * subschemas to one value many times (a `$ref` recursing under `anyOf`, an `allOf` of the same
 * definition twice) costs this much at most on a small value, a few milliseconds of CPU; past it
 * the value is refused as unverifiable (docs/boundary.md#validation-bounds).
 */
export const DEFAULT_MAX_VALIDATION_WORK = 1024 * 1024;

/**
 * Work validating a value may cost per unit of its own weight (1 per value, plus its items,
 * members or characters: looking at every part of it once): a schema may look at each part of
 * a value this many times over. A large value may cost more than a small one, but only in
 * proportion (linear time, as validating it against a plain schema), never exponentially.
 */
export const DEFAULT_VALIDATION_WORK_FACTOR = 4;
