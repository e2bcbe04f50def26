import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { stepUpChallenge } from '../auth/stepUp.js';
import { resourceServerAuthOf, type ServerConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import type { CatalogRefresh } from '../checkpoint/serverCheckpoint.js';
import { upstreamFailureOf } from '../transports/exchange.js';
import type { JsonRpcResponse } from '../wire/jsonRpc.js';
import { replyJson, replyToClient } from './clientReply.js';

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
function applyAuthChallenge(res: ServerResponse, challenge: AuthChallenge): number {
  if (challenge.wwwAuthenticate !== undefined) res.setHeader('www-authenticate', challenge.wwwAuthenticate);
  return challenge.status;
}

/**
 * Answers the requests the upstream's challenge refused. On a transparent route the client gets
 * the challenge (its credential is the upstream's). On a resource-server route it gets the route's
 * own step-up challenge when the upstream asks for a scope its token can earn (stepUpChallenge);
 * otherwise the credential was the gateway's, which the client cannot fix: an error naming the
 * server, no challenge (-32041).
 */
export function replyWithChallenge(
  headers: IncomingHttpHeaders,
  res: ServerResponse,
  config: ServerConfig,
  challenge: AuthChallenge,
  answer: JsonRpcResponse | JsonRpcResponse[] | undefined,
): void {
  const auth = resourceServerAuthOf(config.auth);
  if (auth === undefined) return replyToClient(headers, res, applyAuthChallenge(res, challenge), answer);
  // A scope the client's own token can earn: the route's challenge, so the client steps up.
  const stepUp = stepUpChallenge(auth, challenge.status, challenge.wwwAuthenticate);
  if (stepUp !== undefined) {
    res.setHeader('www-authenticate', stepUp.header);
    return replyJson(res, 403, stepUp.body);
  }
  const message = `toolpin: the upstream of ${config.name} refused the gateway's credential (HTTP ${challenge.status})`;
  const failure = (refused: JsonRpcResponse | undefined): JsonRpcResponse =>
    upstreamFailureOf(config.name, refused?.id ?? null, 'upstream_auth', message, {
      status: challenge.status,
    });
  replyJson(res, 502, Array.isArray(answer) ? answer.map(failure) : failure(answer));
}
