import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import express, { type Request, type Response, type Router } from 'express';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError, parseJsonRpcBody } from '../wire/jsonRpc.js';
import { addressKeyOf, clientKeyOf, credentialOf, isRefusal } from './bridgeSessions.js';
import type { BridgeSessions } from './bridgeSessions.js';
import { replyJson } from './clientReply.js';
import { openBridge, type BridgeFrontOptions } from './openBridge.js';
import { principalOf, scopePrincipalOf } from './requestPrincipal.js';
import { sessionKeyOf } from './sessionKey.js';
import { refuseBadFraming, refuseSession, refuseUnstartedUpstream } from './bridgeRefusals.js';

/** How often an idle SSE stream gets a comment line, so proxies and load balancers keep it open. */
const KEEP_ALIVE_MS = 25_000;

/**
 * The 2024-11-05 HTTP+SSE front for any upstream: `GET <mount>/sse` opens a session whose
 * `endpoint` event names the gateway's own `<mount>/messages?sessionId=…`; POSTs there are routed
 * by sessionId (and must carry the credential that opened the stream) and answered 202; every
 * answer, including a refused call's error, arrives on the session's SSE stream.
 */
export function legacySseFront(
  options: BridgeFrontOptions,
  sessions: BridgeSessions<SSEServerTransport>,
): Router {
  const { checkpoint, logger } = options;
  const front = new LegacySseHandler(options, sessions);
  const router = express.Router();
  // The proxy's framing rules on both paths: GET /sse without a body, POST /messages in UTF-8 JSON.
  router.all('/sse', (req, res, next) => {
    if (!refuseBadFraming(req, res, { logger, server: checkpoint.config.name, allowed: 'GET' })) next();
  });
  router.all('/messages', (req, res, next) => {
    if (!refuseBadFraming(req, res, { logger, server: checkpoint.config.name, allowed: 'POST' })) next();
  });
  router.get('/sse', (req, res, next) => void front.openStream(req, res).catch(next));
  router.post(
    '/messages',
    express.raw({ type: () => true, limit: options.maxBodyBytes }),
    (req, res, next) => {
      front.post(req, res).catch(next);
    },
  );
  return router;
}

/** The two requests of the HTTP+SSE front: opening a session's stream, and posting to it. */
class LegacySseHandler {
  readonly #options: BridgeFrontOptions;
  readonly #sessions: BridgeSessions<SSEServerTransport>;

  constructor(options: BridgeFrontOptions, sessions: BridgeSessions<SSEServerTransport>) {
    this.#options = options;
    this.#sessions = sessions;
  }

  /** `GET /sse`: opens a session (its upstream bridged) whose answers arrive on this stream. */
  async openStream(req: Request, res: Response): Promise<void> {
    const sessions = this.#sessions;
    const server = this.#options.checkpoint.config.name;
    const client = clientKeyOf(req);
    const slot = sessions.reserve(client, addressKeyOf(req));
    if (isRefusal(slot))
      return refuseSession(res, slot, {
        logger: this.#options.logger,
        server,
        id: null,
        client,
        sessions: sessions.size,
        retryAfterSeconds: sessions.retryAfterSeconds,
      });
    // The endpoint is relative to wherever the front is mounted, so clients POST back to the gateway.
    const transport = new SSEServerTransport(`${req.baseUrl}/messages`, res);
    const sessionKey = sessionKeyOf(
      { ...req.headers, 'mcp-session-id': `sse:${transport.sessionId}` },
      principalOf(req.headers),
      scopePrincipalOf(req.headers),
    );
    res.setHeader('x-accel-buffering', 'no');
    let bridge;
    try {
      bridge = await openBridge(this.#options, transport, sessionKey, req.headers, 'sse');
    } catch {
      slot.release();
      if (!res.headersSent) refuseUnstartedUpstream(res, null, server);
      else res.end();
      return;
    }
    // Sessions closed meanwhile (shutdown) close this one, and with it this stream.
    const credential = credentialOf(req.headers);
    if (!slot.fill(transport.sessionId, { carrier: bridge, handler: transport, credential })) return;
    this.#keepOpen(transport.sessionId, res);
  }

  /** Tracks the session's stream and sends it a comment line now and then while it is idle. */
  #keepOpen(sessionId: string, res: Response): void {
    this.#sessions.track(sessionId, res);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    res.once('close', () => clearInterval(keepAlive));
  }

  /** `POST /messages?sessionId=…`: one message of a session, answered 202 (its answer goes on the stream). */
  async post(req: Request, res: Response): Promise<void> {
    const id = typeof req.query.sessionId === 'string' ? req.query.sessionId : '';
    const session = this.#sessions.get(id, req.headers);
    if (session === undefined)
      return replyJson(res, 404, jsonRpcError(null, ErrorCodes.SESSION_NOT_FOUND, 'Session not found'));
    const parsed = parseJsonRpcBody(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
    if (!parsed.ok)
      return replyJson(res, 400, jsonRpcError(parsed.id, parsed.code, parsed.message, parsed.data));
    if (parsed.body.batch)
      return replyJson(
        res,
        400,
        jsonRpcError(null, ErrorCodes.INVALID_REQUEST, 'Invalid Request: batches are not accepted here'),
      );
    this.#sessions.track(id, res);
    await session.handler.handlePostMessage(req, res, parsed.body.messages[0]);
  }
}
