import type { ServerResponse } from 'node:http';
import type { Request } from 'express';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError, type JsonRpcId } from '../wire/jsonRpc.js';
import type { BridgeSessions } from './bridgeSessions.js';
import { replyJson } from './clientReply.js';
import { credentialOf } from './bridgeSessions.js';
import { passedCredentials, type BridgeFrontOptions } from './openBridge.js';
import { StatelessSession } from './statelessSession.js';

function answer(res: ServerResponse, status: number, id: JsonRpcId, message: string): void {
  replyJson(res, status, jsonRpcError(id, ErrorCodes.UPSTREAM_UNAVAILABLE, message));
}

function idOf(body: unknown): JsonRpcId {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** Why a request found no upstream to serve it, and the HTTP status that says so. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
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

  /** Opens the credential's upstream in a reserved slot; rejects with what to answer when it cannot. */
  async function openSession(req: Request, credential: string): Promise<StatelessSession> {
    const slot = sessions.reserve();
    if (slot === undefined) {
      logger.warn(
        { event: 'session.refused', server: guard.config.name, sessions: sessions.size },
        'too many bridged sessions',
      );
      throw new Refusal(503, 'toolpin: too many sessions for this server, try again later');
    }
    let session: StatelessSession;
    try {
      session = await StatelessSession.open({
        guard,
        logger,
        credential,
        headers: passedCredentials(req.headers),
        timeoutMs: options.timeoutMs,
        ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      });
    } catch {
      slot.release();
      throw new Refusal(502, 'toolpin: the upstream could not be started');
    }
    if (!slot.fill(credential, { bridge: session, front: session, credential }))
      throw new Refusal(503, 'toolpin: the server is closing');
    return session;
  }

  /** The credential's live upstream, or the one being opened for it (concurrent first requests share it). */
  function sessionFor(req: Request, credential: string): Promise<StatelessSession> {
    const live = sessions.get(credential, req.headers);
    if (live !== undefined) return Promise.resolve(live.front);
    let pending = opening.get(credential);
    if (pending === undefined) {
      pending = openSession(req, credential);
      opening.set(credential, pending);
      const forget = (): void => void opening.delete(credential);
      pending.then(forget, forget);
    }
    return pending;
  }

  return async (req, res, body) => {
    const credential = credentialOf(req.headers);
    let session: StatelessSession;
    try {
      session = await sessionFor(req, credential);
    } catch (error) {
      const refusal =
        error instanceof Refusal ? error : new Refusal(502, 'toolpin: the upstream could not be started');
      return answer(res, refusal.status, idOf(body), refusal.message);
    }
    sessions.track(credential, res);
    await session.serve(req, res, body);
  };
}
