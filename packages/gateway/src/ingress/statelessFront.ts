import type { ServerResponse } from 'node:http';
import type { Request } from 'express';
import type { JsonRpcId } from '../wire/jsonRpc.js';
import { addressKeyOf, clientKeyOf, credentialOf, isRefusal, type SessionRefusal } from './bridgeSessions.js';
import type { BridgeSessions } from './bridgeSessions.js';
import { passedCredentials, type BridgeFrontOptions } from './openBridge.js';
import { refuseSession, refuseUnstartedUpstream } from './bridgeRefusals.js';
import type { StatelessSession } from './statelessSession.js';

/**
 * The stateless path (StatelessSession and the v2 server SDK it carries), loaded by the first request
 * without a session, once: a gateway that never sees 2026-07-28 traffic never loads it.
 */
let statelessPath: Promise<typeof import('./statelessSession.js')> | undefined;
export function loadStatelessPath(): Promise<typeof import('./statelessSession.js')> {
  statelessPath ??= import('./statelessSession.js');
  return statelessPath;
}

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
  const front = new StatelessHandler(options, sessions);
  return (req, res, body) => front.serve(req, res, body);
}

/** One upstream per credential: found, or opened once for concurrent first requests. */
class StatelessHandler {
  readonly #options: BridgeFrontOptions;
  readonly #sessions: BridgeSessions<StatelessSession>;
  readonly #opening = new Map<string, Promise<StatelessSession>>();

  constructor(options: BridgeFrontOptions, sessions: BridgeSessions<StatelessSession>) {
    this.#options = options;
    this.#sessions = sessions;
  }

  async serve(req: Request, res: ServerResponse, body: unknown): Promise<void> {
    const { checkpoint, logger } = this.#options;
    const credential = credentialOf(req.headers);
    let session: StatelessSession;
    try {
      session = await this.#sessionFor(req, credential);
    } catch (error) {
      if (!(error instanceof Refused))
        return refuseUnstartedUpstream(res, idOf(body), checkpoint.config.name);
      return refuseSession(res, error.refusal, {
        logger,
        server: checkpoint.config.name,
        id: idOf(body),
        client: error.client,
        sessions: this.#sessions.size,
        retryAfterSeconds: this.#sessions.retryAfterSeconds,
      });
    }
    this.#sessions.track(credential, res);
    await session.serve(req, res, body);
  }

  /** The credential's live upstream, or the one being opened for it (concurrent first requests share it). */
  #sessionFor(req: Request, credential: string): Promise<StatelessSession> {
    const live = this.#sessions.get(credential, req.headers);
    if (live !== undefined) return Promise.resolve(live.handler);
    let pending = this.#opening.get(credential);
    if (pending === undefined) {
      pending = this.#open(req, credential);
      this.#opening.set(credential, pending);
      const forget = (): void => void this.#opening.delete(credential);
      pending.then(forget, forget);
    }
    return pending;
  }

  /** Opens the credential's upstream in a reserved slot; rejects with what to answer when it cannot. */
  async #open(req: Request, credential: string): Promise<StatelessSession> {
    const options = this.#options;
    const client = clientKeyOf(req);
    const slot = this.#sessions.reserve(client, addressKeyOf(req));
    if (isRefusal(slot)) throw new Refused(slot, client);
    let session: StatelessSession;
    try {
      const { StatelessSession } = await loadStatelessPath();
      session = await StatelessSession.open({
        checkpoint: options.checkpoint,
        logger: options.logger,
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
}
