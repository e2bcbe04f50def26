import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import express, { type Request, type Response, type Router } from 'express';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError, type JsonRpcId } from '../wire/jsonRpc.js';
import { addressKeyOf, clientKeyOf, credentialOf, isRefusal, serveNamedSession } from './bridgeSessions.js';
import type { BridgeSessions, SessionSlot } from './bridgeSessions.js';
import { postedMessages, replyJson } from './clientReply.js';
import { openBridge, type BridgeFrontOptions } from './openBridge.js';
import { SessionEventStore } from './sessionEventStore.js';
import {
  refuseBadFraming,
  refuseSession,
  refuseUnstartedUpstream,
  type SessionRefusalContext,
} from './bridgeRefusals.js';
import { principalOf, scopePrincipalOf } from './requestPrincipal.js';
import { sessionKeyOf } from './sessionKey.js';
import { loadStatelessPath, type StatelessFront } from './statelessFront.js';
import { SESSION_REQUIRED_MESSAGE } from './sessionRequired.js';

function answer(res: ServerResponse, status: number, id: JsonRpcId, code: number, message: string): void {
  replyJson(res, status, jsonRpcError(id, code, message));
}

/**
 * The gateway's own Streamable HTTP MCP endpoint for an upstream it bridges (a stdio child, or a
 * 2024-11-05 HTTP+SSE server): stateful, one SDK transport and one upstream connection per
 * session, opened by `initialize` and ended by DELETE, the upstream ending, idleness or shutdown.
 * Sessionless 2026-07-28 requests are handed to the stateless front.
 */
export function streamableFront(
  options: BridgeFrontOptions,
  sessions: BridgeSessions<StreamableHTTPServerTransport>,
  stateless: StatelessFront,
): Router {
  const { checkpoint, logger } = options;
  const front = new StreamableHandler(options, sessions, stateless);
  const router = express.Router();
  // The proxy's framing rules, before anything of the request is read: 405, 400 (a body on GET or
  // DELETE), 415 (not UTF-8 JSON).
  router.all('/', (req, res, next) => {
    if (!refuseBadFraming(req, res, { logger, server: checkpoint.config.name })) next();
  });
  router.post('/', express.raw({ type: () => true, limit: options.maxBodyBytes }), (req, res, next) => {
    front.handle(req, res).catch(next);
  });
  router.get('/', (req, res, next) => void front.handle(req, res).catch(next));
  router.delete('/', (req, res, next) => void front.handle(req, res).catch(next));
  return router;
}

/** Routes each request to its session, opens a session on `initialize`, hands sessionless 2026-07-28 requests on. */
class StreamableHandler {
  readonly #options: BridgeFrontOptions;
  readonly #sessions: BridgeSessions<StreamableHTTPServerTransport>;
  readonly #stateless: StatelessFront;

  constructor(
    options: BridgeFrontOptions,
    sessions: BridgeSessions<StreamableHTTPServerTransport>,
    stateless: StatelessFront,
  ) {
    this.#options = options;
    this.#sessions = sessions;
    this.#stateless = stateless;
  }

  async handle(req: Request, res: Response): Promise<void> {
    let body: unknown;
    if (req.method === 'POST') {
      const posted = postedMessages(req.body, res);
      if (posted === undefined) return;
      body = posted.body;
    }
    if (await serveNamedSession(this.#sessions, req, res, body)) return;
    if (req.method !== 'POST' || !isInitializeRequest(body) || !('id' in body)) {
      // Without a session: 2026-07-28 traffic (the SDK's own classification) is served statelessly.
      if (req.method === 'POST' && !(await (await loadStatelessPath()).isLegacyHttpRequest(req, body)))
        return this.#stateless(req, res, body);
      return answer(res, 400, null, ErrorCodes.SESSION_REQUIRED, SESSION_REQUIRED_MESSAGE);
    }
    await this.#initialize(req, res, body as { id: JsonRpcId });
  }

  /** An `initialize` without a session: claims room for one (or refuses), then opens it. */
  async #initialize(req: Request, res: Response, initialize: { id: JsonRpcId }): Promise<void> {
    const sessions = this.#sessions;
    const client = clientKeyOf(req);
    const slot = sessions.reserve(client, addressKeyOf(req));
    const refusalContext = {
      logger: this.#options.logger,
      server: this.#options.checkpoint.config.name,
      id: initialize.id,
      client,
      sessions: sessions.size,
      retryAfterSeconds: sessions.retryAfterSeconds,
    };
    if (isRefusal(slot)) return refuseSession(res, slot, refusalContext);
    await this.#open(req, res, initialize, slot, refusalContext);
  }

  async #open(
    req: Request,
    res: Response,
    initialize: { id: JsonRpcId },
    slot: SessionSlot<StreamableHTTPServerTransport>,
    refusalContext: SessionRefusalContext,
  ): Promise<void> {
    const id = randomUUID();
    // Each session keeps its own bounded event history, so a cut stream resumes with Last-Event-ID.
    const events = new SessionEventStore();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id, eventStore: events });
    // A bridged upstream receives the credential alone (Authorization, Cookie): that is the caller.
    const { authorization, cookie } = req.headers;
    const sessionKey = sessionKeyOf(
      { authorization, cookie, 'mcp-session-id': id },
      principalOf(req.headers),
      scopePrincipalOf(req.headers),
    );
    let bridge;
    try {
      bridge = await openBridge(this.#options, transport, sessionKey, req.headers, 'streamable-http');
    } catch {
      slot.release();
      return refuseUnstartedUpstream(res, initialize.id, this.#options.checkpoint.config.name);
    }
    // Set before registration, which wraps it: the registry forgets the session, then this runs.
    bridge.onclose = () => events.close();
    if (!slot.fill(id, { carrier: bridge, handler: transport, credential: credentialOf(req.headers) }))
      return refuseSession(res, { refused: 'closing' }, refusalContext);
    this.#sessions.track(id, res);
    await transport.handleRequest(req, res, initialize);
  }
}
