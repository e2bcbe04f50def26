import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { GatewayError } from '../errors.js';
import { redactBytes } from '../wire/redactBytes.js';
import { requestIdsOf } from './checkedFetch.js';
import { upstreamFailureOf } from './exchange.js';
import type { UpstreamOAuth } from './upstreamOAuth.js';

/** What an echoed bearer is replaced with in the upstream's answers. */
const REDACTED = '[redacted]';

// Never followed, whoever asks: a redirect would carry the bearer to another path (the same origin
// keeps the Authorization header) or the request to another origin.
function withBearer(init: RequestInit | undefined, token: string): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${token}`);
  return { ...init, headers, redirect: 'manual' };
}

/**
 * The upstream's answer with the bearer it was sent replaced wherever its body echoes it (a debug
 * error page, a tool that shows request headers): what the client, the SDK's error messages and
 * the log read. Byte for byte: an upstream that encodes the token otherwise is not caught.
 */
function withoutBearer(response: Response, token: string | undefined): Response {
  if (token === undefined || response.body === null) return response;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(response.body.pipeThrough(redactBytes(token, REDACTED)), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/**
 * The answer to a request that could not be authorized: one -32041 per JSON-RPC request of the
 * body (`data.reason` `upstream_auth`, `data.auth` why, the server named, the `toolpin login` to
 * run in the message), status 200 so the SDK's client reads it; a body without requests (a
 * notification, the GET stream) gets the 401 (or 403) it would have got.
 */
function refusedAnswer(body: RequestInit['body'], error: GatewayError, status = 401): Response {
  const ids = requestIdsOf(body);
  if (ids.length === 0) return new Response(null, { status });
  const reason = String(error.data.reason ?? 'login_required');
  const errors = ids.map((id) =>
    upstreamFailureOf(String(error.data.server), id, 'upstream_auth', `toolpin: ${error.message}`, {
      auth: reason,
    }),
  );
  return new Response(JSON.stringify(ids.length === 1 ? errors[0] : errors), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * A 403 `insufficient_scope` (RFC 6750 §3.1): the token lacks a scope the upstream asks for. A
 * step-up needs the user (a new authorization), so it is refused, naming the scope (the bearer
 * redacted from it) and the login to run; any other 403 is the upstream's answer, as it is.
 */
async function insufficientScope(
  oauth: UpstreamOAuth,
  response: Response,
  exchange: { body: RequestInit['body']; token: string | undefined },
  report: BearerReport,
): Promise<Response> {
  const { error, scope } = extractWWWAuthenticateParams(response);
  if (error !== 'insufficient_scope') return response;
  await response.body?.cancel().catch(() => undefined);
  const { body, token } = exchange;
  const shown = token === undefined ? scope : scope?.replaceAll(token, REDACTED);
  const asked = shown === undefined ? 'a scope its token does not carry' : `the scope "${shown}"`;
  report('refused', 'insufficient_scope');
  return refusedAnswer(body, oauth.refusal('insufficient_scope', `the upstream asks for ${asked}`), 403);
}

function isAuthRefusal(error: unknown): error is GatewayError {
  return error instanceof GatewayError && error.code === 'GW_UPSTREAM_AUTH';
}

/** Told what the client mode did (for a log line): a token refreshed after a 401, or a request refused and why. Never a token. */
export type BearerReport = (what: 'refreshed' | 'refused', reason: string) => void;

/**
 * A fetch toward an upstream of `auth.mode: client`: every request carries the stored bearer
 * (refreshed first when it expires); a 401 refreshes it once, without the user, and the request is
 * sent again. When there is no token or the refresh fails, the request is not sent (or not sent
 * again) and its JSON-RPC requests are answered -32041 (fail closed). No redirect is followed, and
 * the bearer is redacted from what the upstream answers. Put under checkedFetch, so what the SDK
 * reads is still the gateway's parse.
 */
export function bearerFetch(
  oauth: UpstreamOAuth,
  base: FetchLike = fetch,
  report: BearerReport = () => undefined,
): FetchLike {
  const upstream = new URL(oauth.options.url).href;
  return async (url, init) => {
    // The bearer is for the upstream URL of the pin, nothing else: a redirect the SDK's transport
    // follows itself (same origin, another path) or any other URL is not sent.
    const target = new URL(String(url));
    if (target.href !== upstream)
      throw new TypeError(
        `toolpin: the OAuth bearer of server ${oauth.options.server} is sent only to ${upstream}, not to ${target.origin}${target.pathname}`,
      );
    let token: string | undefined;
    /** Sends the request with the token `next` gives, or answers the refusal it throws. */
    const send = async (next: () => Promise<string>): Promise<Response> => {
      try {
        token = await next();
      } catch (error) {
        if (!isAuthRefusal(error)) throw error;
        token = undefined;
        report('refused', String(error.data.reason));
        return refusedAnswer(init?.body, error);
      }
      return withoutBearer(await base(url, withBearer(init, token)), token);
    };
    const first = await send(() => oauth.accessToken());
    if (first.status === 403) return insufficientScope(oauth, first, { body: init?.body, token }, report);
    if (first.status !== 401 || token === undefined) return first;
    await first.body?.cancel().catch(() => undefined);
    const rejected = token;
    const second = await send(() => oauth.refresh(rejected));
    if (token !== undefined) report('refreshed', 'upstream_401');
    if (second.status === 403) return insufficientScope(oauth, second, { body: init?.body, token }, report);
    if (second.status !== 401 || token === undefined) return second;
    await second.body?.cancel().catch(() => undefined);
    report('refused', 'login_required');
    return refusedAnswer(
      init?.body,
      oauth.refusal('login_required', 'the upstream refused its refreshed OAuth token (HTTP 401)'),
    );
  };
}
