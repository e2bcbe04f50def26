import { AUTH_FETCH_TIMEOUT_MS, AUTH_MAX_RESPONSE_BYTES } from '../defaults.js';
import { GatewayError } from '../errors.js';
import { isObject } from '../wire/isObject.js';
import { isLoopbackUrl } from '../wire/loopback.js';
import { readBounded } from '../wire/readBounded.js';

// The one way the gateway reaches an identity provider (metadata, JWKS, introspection, token
// endpoints): HTTPS only (plain HTTP on this machine alone), no redirect followed, bounded in time
// and size. A URL the gateway would fetch is never taken from a request: only from the pin file
// or from the configured issuer's own metadata, and checked here either way (no SSRF through
// metadata that names an internal address over plain HTTP).

/** The origin of a URL, for errors and logs (never its path or query, which may carry a secret). */
function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : '(not a URL)';
}

function providerFailure(url: string, reason: string, message: string): GatewayError {
  return new GatewayError('GW_AUTH_PROVIDER_UNAVAILABLE', message, { url: originOf(url), reason });
}

/** True when an OAuth request (either side: resource server or client mode) may go to `url`: HTTPS, or plain HTTP to this machine. */
export function isOAuthUrlAllowed(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackUrl(url.href));
}

/** Throws unless `url` is HTTPS, or plain HTTP to this machine. */
export function checkAuthUrl(url: string): void {
  if (!URL.canParse(url)) throw providerFailure(url, 'not_a_url', 'an identity provider URL does not parse');
  if (isOAuthUrlAllowed(new URL(url))) return;
  throw providerFailure(url, 'not_https', `identity provider URLs must be HTTPS (${originOf(url)} is not)`);
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * An OAuth answer read whole within `maxBytes`, handed on as a buffered Response (so no reader
 * after this one reads more than the bound), or `too_large`.
 */
export async function bufferedAnswer(response: Response, maxBytes: number): Promise<Response | 'too_large'> {
  if (response.body === null || NULL_BODY_STATUSES.has(response.status)) return response;
  const chunks: Uint8Array[] = [];
  const end = await readBounded(response.body, maxBytes, (chunk) => void chunks.push(chunk));
  if (end === 'too_large') return 'too_large';
  const headers = new Headers(response.headers);
  headers.delete('content-encoding');
  headers.delete('content-length');
  return new Response(Buffer.concat(chunks), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/** A fetch of an identity provider URL, checked and bounded; the answer is read whole (a buffered Response). */
export async function authFetch(url: string, init: RequestInit = {}): Promise<Response> {
  checkAuthUrl(url);
  let response: Response;
  try {
    response = await fetch(url, {
      ...init,
      redirect: 'manual',
      signal: AbortSignal.timeout(AUTH_FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
    throw providerFailure(url, reason, `the identity provider at ${originOf(url)} could not be reached`);
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    throw providerFailure(
      url,
      'redirect',
      `the identity provider at ${originOf(url)} redirected: not followed`,
    );
  }
  const answer = await bufferedAnswer(response, AUTH_MAX_RESPONSE_BYTES);
  if (answer === 'too_large')
    throw providerFailure(
      url,
      'too_large',
      `an answer of ${originOf(url)} exceeds ${AUTH_MAX_RESPONSE_BYTES} bytes`,
    );
  return answer;
}

/** The JSON object of an identity provider's answer; throws unless it is one. */
export async function authJson(url: string, response: Response): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await response.text());
  } catch {
    value = undefined;
  }
  if (!isObject(value))
    throw providerFailure(
      url,
      'malformed',
      `the identity provider at ${originOf(url)} did not answer a JSON object`,
    );
  return value;
}

/** Fetches a JSON document (metadata) that must be answered 200. */
export async function fetchAuthDocument(url: string): Promise<Record<string, unknown>> {
  const response = await authFetch(url, { headers: { accept: 'application/json' } });
  if (response.status !== 200)
    throw providerFailure(
      url,
      'status',
      `the identity provider at ${originOf(url)} answered HTTP ${response.status}`,
    );
  return authJson(url, response);
}
