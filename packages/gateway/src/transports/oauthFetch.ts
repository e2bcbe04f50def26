import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AUTH_MAX_RESPONSE_BYTES, AUTH_FETCH_TIMEOUT_MS } from '../defaults.js';
import { bufferedAnswer, isOAuthUrlAllowed } from '../auth/authFetch.js';

/** Options of {@link oauthFetch}. */
export interface OAuthFetchOptions {
  /** Bound on one answer's body, in bytes. @default 256 KiB */
  readonly maxBytes?: number;
  /** Bound on one request, answer read whole, in ms. @default 10000 */
  readonly timeoutMs?: number;
  /** The fetch under it. @default globalThis.fetch */
  readonly base?: FetchLike;
}

/** Why an OAuth request of the client mode was not sent or its answer not read. */
export class OAuthFetchRefused extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthFetchRefused';
  }
}

/**
 * The fetch of every OAuth request the client mode sends (protected resource and authorization
 * server metadata, registration, token): HTTPS only except loopback, no redirect followed (the
 * SDK's discovery follows one only within its origin, and each hop comes back through here, so is
 * checked again), each request bounded in time and its body in size. The answer is handed on read
 * whole, so the SDK never reads more than the bound.
 */
export function oauthFetch(options: OAuthFetchOptions = {}): FetchLike {
  const base = options.base ?? fetch;
  const max = options.maxBytes ?? AUTH_MAX_RESPONSE_BYTES;
  const timeoutMs = options.timeoutMs ?? AUTH_FETCH_TIMEOUT_MS;
  return async (input, init) => {
    const url = new URL(String(input));
    if (!isOAuthUrlAllowed(url))
      throw new OAuthFetchRefused(
        `OAuth requests go to https:// URLs (or http:// on this machine): ${url.origin}`,
      );
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const response = await base(url, { ...init, redirect: 'manual', signal });
    const answer = await bufferedAnswer(response, max);
    if (answer === 'too_large')
      throw new OAuthFetchRefused(`the OAuth answer of ${url.origin} is larger than ${max} bytes`);
    return answer;
  };
}
