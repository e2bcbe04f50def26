import type { ServerResponse } from 'node:http';
import type { Request } from 'express';
import type { JsonRpcId } from '../wire/jsonRpc.js';
import { addressKeyOf, clientKeyOf, credentialOf, isRefusal, type SessionRefusal } from './bridgeSessions.js';
import type { BridgeSessions } from './bridgeSessions.js';
import { passedCredentials, type BridgeFrontOptions } from './openBridge.js';
import { refuseSession, refuseUnstartedUpstream } from './bridgeRefusals.js';
import { StatelessSession } from './statelessSession.js';

function idOf(body: unknown): JsonRpcId {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** There was no room for the credential's upstream (see refuseSession). */
class Refused extends Error {
  constructor(
    readonly refusal: SessionRefusal,
    readonly client: string,
  ) {
    super(refusal.refused);
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
  const { checkpoint, logger } = options;
  const opening = new Map<string, Promise<StatelessSession>>();

  /** Opens the credential's upstream in a reserved slot; rejects with what to answer when it cannot. */
  async function openSession(req: Request, credential: string): Promise<StatelessSession> {
    const client = clientKeyOf(req);
    const slot = sessions.reserve(client, addressKeyOf(req));
    if (isRefusal(slot)) throw new Refused(slot, client);
    let session: StatelessSession;
    try {
      session = await StatelessSession.open({
        checkpoint,
        logger,
        credential,
        headers: passedCredentials(req.headers),
        timeoutMs: options.timeoutMs,
        ...(options.streamIdleMs === undefined ? {} : { streamIdleMs: options.streamIdleMs }),
        ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      });
    } catch (error) {
      slot.release();
      throw error;
    }
    if (!slot.fill(credential, { carrier: session, handler: session, credential }))
      throw new Refused({ refused: 'closing' }, client);
    return session;
  }

  /** The credential's live upstream, or the one being opened for it (concurrent first requests share it). */
  function sessionFor(req: Request, credential: string): Promise<StatelessSession> {
    const live = sessions.get(credential, req.headers);
    if (live !== undefined) return Promise.resolve(live.handler);
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
      if (!(error instanceof Refused))
        return refuseUnstartedUpstream(res, idOf(body), checkpoint.config.name);
      return refuseSession(res, error.refusal, {
        logger,
        server: checkpoint.config.name,
        id: idOf(body),
        client: error.client,
        sessions: sessions.size,
        retryAfterSeconds: sessions.retryAfterSeconds,
      });
    }
    sessions.track(credential, res);
    await session.serve(req, res, body);
  };
}
