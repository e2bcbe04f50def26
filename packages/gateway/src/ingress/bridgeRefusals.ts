import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError, type JsonRpcId } from '../wire/jsonRpc.js';
import type { SessionRefusal, SessionRefusalReason } from './bridgeSessions.js';
import { replyJson } from './clientReply.js';
import { checkRequestFraming, type FramingRefusal } from './requestBoundary.js';

/** What a refusal names: the request it answers, the server, the client, and when to try again. */
export interface SessionRefusalContext {
  readonly logger: GatewayLogger;
  readonly server: string;
  /** The id of the request that asked for the session (initialize), or null (a legacy SSE GET). */
  readonly id: JsonRpcId;
  /** The client's quota key (see clientKeyOf); logged as a short hash only. */
  readonly client: string;
  /** Live sessions of the front, for the log line. */
  readonly sessions: number;
  readonly retryAfterSeconds: number;
}

const MESSAGES: Record<SessionRefusalReason, string> = {
  too_many_sessions: 'toolpin: too many sessions for this server, try again later',
  client_quota:
    'toolpin: this client holds as many sessions of this server as it may; end one (DELETE) or let an idle one close',
  address_quota:
    'toolpin: this address holds as many sessions of this server as it may; end one (DELETE) or let an idle one close',
  closing: 'toolpin: the server is closing, try again later',
};

/**
 * Answers a request that asked for a bridged session (a child process, an upstream stream) when
 * there is no room for one, on every bridged front alike: 429 when the client's own quota or its
 * address's quota is used up, 503 when the server's bound is reached or the server is closing; a
 * `Retry-After`; one JSON-RPC error `-32041` with `data.reason` (`client_quota`, `address_quota`,
 * `too_many_sessions`, `closing`); and a `session.refused` log line.
 */
export function refuseSession(
  res: ServerResponse,
  refusal: SessionRefusal,
  context: SessionRefusalContext,
): void {
  const reason = refusal.refused;
  context.logger.warn(
    {
      event: 'session.refused',
      server: context.server,
      reason,
      client: sessionLabel(context.client),
      sessions: context.sessions,
    },
    'no room for a bridged session',
  );
  res.setHeader('retry-after', String(context.retryAfterSeconds));
  replyJson(
    res,
    reason === 'client_quota' || reason === 'address_quota' ? 429 : 503,
    jsonRpcError(context.id, ErrorCodes.UPSTREAM_UNAVAILABLE, MESSAGES[reason], {
      reason,
      server: context.server,
    }),
  );
}

/**
 * Checks a request to a bridged HTTP endpoint by the same framing rules as the transparent proxy
 * (ingress/requestBoundary.ts): on `/<name>/mcp` POST carries UTF-8 JSON, GET and DELETE no body, any
 * other method is 405. `allowed` narrows the methods of a legacy HTTP+SSE path (GET `/sse`, POST
 * `/messages`). Answers the refusal (JSON-RPC `-32600`, `id: null`, nothing reaches the upstream)
 * and returns true when the request is refused.
 */
export function refuseBadFraming(
  req: IncomingMessage,
  res: ServerResponse,
  context: { readonly logger: GatewayLogger; readonly server: string; readonly allowed?: string },
): boolean {
  const allowed = context.allowed;
  const method = req.method ?? '';
  const refusal: FramingRefusal | undefined =
    allowed !== undefined && method !== allowed
      ? {
          status: 405,
          message: `Method Not Allowed: this endpoint serves ${allowed}`,
          headers: { allow: allowed },
        }
      : checkRequestFraming(req);
  if (refusal === undefined) return false;
  refuseFraming(res, refusal, { logger: context.logger, server: context.server, method });
  return true;
}

/**
 * Answers a request whose method or framing an MCP endpoint does not take, on every front alike
 * (the transparent proxy and the bridged fronts): a `request.rejected` log line, the refusal's
 * headers (`Allow` on a 405), and one JSON-RPC error `-32600` with `id: null`. Nothing reaches the
 * upstream.
 */
export function refuseFraming(
  res: ServerResponse,
  refusal: FramingRefusal,
  context: { readonly logger: GatewayLogger; readonly server: string; readonly method: string | undefined },
): void {
  context.logger.warn(
    {
      event: 'request.rejected',
      server: context.server,
      method: context.method,
      status: refusal.status,
      err: refusal.message,
    },
    refusal.message,
  );
  for (const [name, value] of Object.entries(refusal.headers ?? {}))
    if (value !== undefined) res.setHeader(name, value);
  replyJson(res, refusal.status, jsonRpcError(null, ErrorCodes.INVALID_REQUEST, refusal.message));
}

/**
 * Answers a request that needed a bridged upstream (a child process, an upstream stream) the
 * gateway could not start: 502 with one JSON-RPC error `-32041`, `data.reason` `unreachable`.
 */
export function refuseUnstartedUpstream(res: ServerResponse, id: JsonRpcId, server: string): void {
  replyJson(
    res,
    502,
    jsonRpcError(id, ErrorCodes.UPSTREAM_UNAVAILABLE, 'toolpin: the upstream could not be started', {
      reason: 'unreachable',
      server,
    }),
  );
}
