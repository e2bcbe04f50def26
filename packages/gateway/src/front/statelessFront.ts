import type { ServerResponse } from 'node:http';
import type { Request } from 'express';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError, type JsonRpcId } from '../wire/jsonRpc.js';
import type { BridgeSessions } from './bridgeSessions.js';
import { credentialOf } from './bridgeSessions.js';
import { passedCredentials, type BridgeFrontOptions } from './openBridge.js';
import { StatelessSession } from './statelessSession.js';

function answer(res: ServerResponse, status: number, id: JsonRpcId, message: string): void {
  const body = JSON.stringify(jsonRpcError(id, ErrorCodes.UPSTREAM_UNAVAILABLE, message));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function idOf(body: unknown): JsonRpcId {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** Serves one 2026-07-28 (sessionless) request on a bridged route. */
export type StatelessFront = (req: Request, res: ServerResponse, body: unknown) => Promise<void>;

/**
 * The 2026-07-28 side of a bridged route: one upstream per credential (a child, or a legacy
 * HTTP+SSE session), opened by the credential's first request, shared by its later ones, and
 * closed after the sessions' idle time without a request or an open stream. Bounded like the
 * session clients' children; concurrent first requests of one credential open one upstream.
 */
export function statelessFront(
  options: BridgeFrontOptions,
  sessions: BridgeSessions<StatelessSession>,
): StatelessFront {
  const { guard, logger } = options;
  const opening = new Map<string, Promise<StatelessSession>>();

  async function sessionFor(req: Request, key: string): Promise<StatelessSession> {
    const live = sessions.get(key, req.headers);
    if (live !== undefined) return live.front;
    let pending = opening.get(key);
    if (pending === undefined) {
      pending = StatelessSession.open({
        guard,
        logger,
        sessionKey: key,
        headers: passedCredentials(req.headers),
        timeoutMs: options.timeoutMs,
        ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      }).then((session) => {
        sessions.add(key, { bridge: session, front: session, credential: key });
        return session;
      });
      opening.set(key, pending);
      void pending.then(
        () => opening.delete(key),
        () => opening.delete(key),
      );
    }
    return pending;
  }

  return async (req, res, body) => {
    // The credential is both the upstream's owner and the key of the catalog it observes.
    const key = credentialOf(req.headers);
    if (sessions.get(key, req.headers) === undefined && !opening.has(key) && !sessions.hasRoom) {
      logger.warn(
        { event: 'session.refused', server: guard.config.name, sessions: sessions.size },
        'too many bridged sessions',
      );
      return answer(res, 503, idOf(body), 'toolpin: too many sessions for this server, try again later');
    }
    let session: StatelessSession;
    try {
      session = await sessionFor(req, key);
    } catch {
      return answer(res, 502, idOf(body), 'toolpin: the upstream could not be started');
    }
    sessions.track(key, res);
    await session.serve(req, res, body);
  };
}
