import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import type { CatalogRefresh } from '../checkpoint/serverCheckpoint.js';

/** An upstream's refusal of the client's credential, met while listing on the client's behalf. */
export interface AuthChallenge {
  readonly status: 401 | 403;
  /** The upstream's `WWW-Authenticate` value (RFC 9110 §11.6.1), when it sent one. */
  readonly wwwAuthenticate: string | undefined;
}

/** The auth challenge a fetch-on-miss failure carries, when the upstream answered 401 or 403. */
function authChallengeOf(error: unknown): AuthChallenge | undefined {
  if (!(error instanceof GatewayError) || error.code !== 'GW_CATALOG_UNAVAILABLE') return undefined;
  const { status, wwwAuthenticate } = error.data;
  if (status !== 401 && status !== 403) return undefined;
  return { status, wwwAuthenticate: typeof wwwAuthenticate === 'string' ? wwwAuthenticate : undefined };
}

/** Wraps a fetch on miss so that an auth refusal of the upstream is reported before it propagates. */
export function captureAuthChallenge(
  refresh: CatalogRefresh,
  onChallenge: (challenge: AuthChallenge) => void,
): CatalogRefresh {
  return async (listing) => {
    try {
      return await refresh(listing);
    } catch (error) {
      const challenge = authChallengeOf(error);
      if (challenge !== undefined) onChallenge(challenge);
      throw error;
    }
  };
}

/**
 * Prepares the client's answer to carry the upstream's challenge: the upstream would have refused
 * this request with it, and an MCP client re-authenticates on a 401/403 with `WWW-Authenticate`,
 * never on a JSON-RPC error inside a 200.
 */
export function applyAuthChallenge(res: ServerResponse, challenge: AuthChallenge): number {
  if (challenge.wwwAuthenticate !== undefined) res.setHeader('www-authenticate', challenge.wwwAuthenticate);
  return challenge.status;
}
