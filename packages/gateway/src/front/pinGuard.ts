import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { httpUpstreamOf, parseServerConfig, type ServerConfig } from '../config/index.js';
import { screenCall } from '../guard/screenCall.js';
import { ServerGuard } from '../guard/serverGuard.js';
import { Alerts } from '../observe/alerts.js';
import { createLogger, type GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import { fetchToolPages } from '../state/fetchToolPages.js';
import { SessionStore } from '../state/sessionStore.js';
import { ToolDigester } from '../state/toolDigester.js';
import type { Exchange } from '../transports/exchange.js';
import { createStreamableHttpProxy } from '../transports/streamableHttpProxy.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import {
  isRequest,
  isRequestWithoutId,
  jsonRpcError,
  parseJsonRpcBody,
  type JsonRpcMessage,
  type JsonRpcResponse,
} from '../wire/jsonRpc.js';
import { checkMirroredHeaders, detectEra } from '../wire/mcpEra.js';
import { applyAuthChallenge, captureAuthChallenge, type AuthChallenge } from './authChallenge.js';
import { replyToClient } from './clientReply.js';
import { forwardedCredentials } from './forwardedCredentials.js';
import { isIdentityEncoded, readRequestBody } from './readRequestBody.js';
import { checkRequestFraming } from './requestBoundary.js';
import { refuseFraming } from './bridgeRefusals.js';
import { sessionKeyOf } from './sessionKey.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_UPSTREAM_BYTES,
  DEFAULT_STREAM_IDLE_MS,
  DEFAULT_TIMEOUT_MS,
} from '../defaults.js';

/** Options of {@link pinGuard}. */
export interface PinGuardOptions {
  /** The server's pin, in the pin-file format (an object, validated strictly) or already parsed. */
  readonly pin: ServerConfig | Record<string, unknown>;
  /** Overrides the pin's `upstream.url`. */
  readonly upstream?: string;
  /** @default a pino logger on stdout */
  readonly logger?: GatewayLogger;
  /** Shared with other guards of one gateway; by default each guard has its own. */
  readonly alerts?: Alerts;
  readonly sessions?: SessionStore;
  readonly digester?: ToolDigester;
  /** @default 4 MiB */
  readonly maxBodyBytes?: number;
  /** Time to the upstream's response headers (and per page of a fetch on miss). @default 30000 */
  readonly upstreamTimeoutMs?: number;
  /** Idle time allowed between two chunks of an upstream SSE stream. @default 300000 */
  readonly streamIdleMs?: number;
}

/** Express middleware that enforces one server's pin, with its guard exposed for reload and status. */
export type PinGuardRouter = RequestHandler & { readonly guard: ServerGuard };

// pinGuard's handlers use nothing express adds to a request (only node's own request and response),
// so createGateway may serve them before express: see servesWithoutExpress.
const plainHandlers = new WeakSet<object>();

/** True for a handler made by pinGuard: it needs nothing express adds to a request or response. */
export function servesWithoutExpress(handler: object): boolean {
  return plainHandlers.has(handler);
}

/** The path of a request URL relative to the mount point, as express's `req.path` gives it. */
function pathOf(url: string | undefined): string {
  const end = url === undefined ? -1 : url.indexOf('?');
  const path = url === undefined ? '' : end < 0 ? url : url.slice(0, end);
  return path === '' ? '/' : path;
}

function toServerConfig(pin: PinGuardOptions['pin'], upstream: string | undefined): ServerConfig {
  const parsed =
    'file' in pin && typeof pin.file === 'string'
      ? (pin as ServerConfig)
      : parseServerConfig(pin, '(pinGuard options)');
  return upstream === undefined
    ? parsed
    : { ...parsed, upstream: { ...httpUpstreamOf(parsed), url: upstream } };
}

/**
 * Express middleware that puts toolpin's pin enforcement in front of one MCP server, under any
 * mount path: `app.use('/mcp', pinGuard({ pin, upstream }))`.
 */
export function pinGuard(options: PinGuardOptions): PinGuardRouter {
  const config = toServerConfig(options.pin, options.upstream);
  const logger = options.logger ?? createLogger();
  const guard = new ServerGuard({
    config,
    sessions: options.sessions ?? new SessionStore(),
    digester: options.digester ?? new ToolDigester(),
    alerts: options.alerts ?? new Alerts(logger),
    logger,
  });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const http = httpUpstreamOf(config);
  const proxy = createStreamableHttpProxy({
    url: http.url,
    headers: http.headers,
    logger,
    maxResponseBytes: DEFAULT_MAX_UPSTREAM_BYTES,
    timeoutMs,
    streamIdleMs: options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS,
  });

  // A compressed body (rare) still goes through express.raw, which inflates it.
  const inflatingParser = express.raw({ type: () => true, limit: maxBodyBytes });
  // A plain handler rather than an express Router: one path, two kinds of request, and the
  // router's per-request work was most of what express cost here.
  function handle(req: Request, res: Response, next: NextFunction): void {
    const fail = (error: unknown): void =>
      rejectRequest(error as Error & { status?: number; type?: string }, req, res, next);
    try {
      if (pathOf(req.url) !== '/') return next();
      const refusal = checkRequestFraming(req);
      if (refusal !== undefined)
        refuseFraming(res, refusal, { logger, server: guard.config.name, method: req.method });
      else if (req.method === 'POST') receivePost(req, res, fail);
      else forwardOther(req, res);
    } catch (error) {
      fail(error);
    }
  }
  function receivePost(req: Request, res: Response, next: NextFunction): void {
    if (!isIdentityEncoded(req)) {
      inflatingParser(req, res, (error?: unknown) =>
        error === undefined ? handlePost(req, res).catch(next) : next(error),
      );
      return;
    }
    readRequestBody(req, maxBodyBytes)
      .then((body) => {
        req.body = body;
        return handlePost(req, res);
      })
      .catch(next);
  }
  /** A GET (the session's stream) or a DELETE (its end): no body, nothing to decide but the answer. */
  function forwardOther(req: Request, res: Response): void {
    guard.alerts.telemetry.onRequest(guard.config.name, req.method);
    const sessionKey = sessionKeyOf(req.headers);
    if (req.method === 'DELETE')
      res.on('finish', () => res.statusCode < 300 && guard.forgetSession(sessionKey));
    proxy({ guard, sessionKey, body: undefined, requestIds: [], refused: [], batch: false }, req, res);
  }
  function rejectRequest(
    error: Error & { status?: number; type?: string },
    req: Request,
    res: Response,
    next: NextFunction,
  ): void {
    if (res.headersSent) return next(error);
    const status = error.status ?? 500;
    const message =
      error.type === 'entity.too.large'
        ? `Request body exceeds ${maxBodyBytes} bytes`
        : status === 500
          ? 'toolpin internal error'
          : error.message;
    logger[status >= 500 ? 'error' : 'warn'](
      { event: 'request.rejected', server: guard.config.name, status, err: error.message },
      message,
    );
    replyToClient(
      req.headers,
      res,
      status,
      jsonRpcError(null, status === 413 ? ErrorCodes.INVALID_REQUEST : ErrorCodes.INTERNAL_ERROR, message),
    );
  }

  async function handlePost(req: Request, res: Response): Promise<void> {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const parsed = parseJsonRpcBody(raw.toString('utf8'));
    if (!parsed.ok) {
      logger.warn(
        { event: 'request.malformed', server: guard.config.name, code: parsed.code },
        parsed.message,
      );
      replyToClient(req.headers, res, 400, jsonRpcError(null, parsed.code, parsed.message));
      return;
    }
    const mismatch = checkMirroredHeaders(req.headers, parsed.body);
    if (mismatch !== undefined) {
      const first = parsed.body.messages[0];
      const id = first !== undefined && 'id' in first && first.id !== undefined ? first.id : null;
      logger.warn({ event: 'request.header_mismatch', server: guard.config.name }, mismatch);
      replyToClient(req.headers, res, 400, jsonRpcError(id, ErrorCodes.HEADER_MISMATCH, mismatch));
      return;
    }
    const sessionKey = sessionKeyOf(req.headers);
    const stateless = detectEra(req.headers) === 'stateless';
    const forward: JsonRpcMessage[] = [];
    const refused: JsonRpcResponse[] = [];
    const auth: { challenge?: AuthChallenge } = {};
    for (const message of parsed.body.messages) {
      if ('method' in message && typeof message.method === 'string')
        guard.alerts.telemetry.onRequest(guard.config.name, message.method);
      if (isRequestWithoutId(message)) {
        dropRequestWithoutId(sessionKey, message.method);
        continue;
      }
      if (isRequest(message) && message.method === 'tools/call') {
        const decided = decide(
          req,
          sessionKey,
          stateless,
          message,
          (challenge) => (auth.challenge = challenge),
        );
        // Most calls are decided at once from the session's catalog: no promise to wait for.
        const refusal = decided instanceof Promise ? await decided : decided;
        if (refusal !== undefined) {
          refused.push(refusal);
          continue;
        }
      } else if (isRequest(message) && message.method === 'tools/list') {
        const cursor = message.params?.cursor;
        guard.expectList(sessionKey, message.id, typeof cursor === 'string' ? cursor : undefined);
      }
      forward.push(message);
    }
    if (auth.challenge !== undefined && refused.length > 0) {
      // The upstream refused this client's credential: the client gets its challenge, nothing goes upstream.
      replyToClient(
        req.headers,
        res,
        applyAuthChallenge(res, auth.challenge),
        parsed.body.batch ? refused : refused[0],
      );
      return;
    }
    if (forward.length === 0) {
      // Nothing left to forward and nothing to answer (only dropped notifications): accepted.
      if (refused.length === 0) res.writeHead(202).end();
      else replyToClient(req.headers, res, 200, parsed.body.batch ? refused : refused[0]);
      return;
    }
    // What goes upstream is the gateway's serialization of the messages it decided on, never the
    // client's bytes: duplicate keys, odd spacing or encodings cannot mean one thing here and
    // another there.
    const body = Buffer.from(JSON.stringify(parsed.body.batch ? forward : forward[0]));
    const exchange: Exchange = {
      guard,
      sessionKey,
      body,
      requestIds: forward.filter(isRequest).map((message) => message.id),
      refused,
      batch: parsed.body.batch,
    };
    proxy(exchange, req, res);
  }

  /** Logs a request sent without an id (see isRequestWithoutId): dropped, never forwarded. */
  function dropRequestWithoutId(sessionKey: string, method: string): void {
    logger.warn(
      { event: 'request.dropped', server: guard.config.name, session: sessionLabel(sessionKey), method },
      `dropped a ${method} request sent without an id: it is never forwarded`,
    );
  }

  function decide(
    req: Request,
    sessionKey: string,
    stateless: boolean,
    message: JsonRpcMessage & { id: JsonRpcResponse['id'] },
    onChallenge: (challenge: AuthChallenge) => void,
  ): JsonRpcResponse | undefined | Promise<JsonRpcResponse | undefined> {
    const params = 'params' in message ? message.params : undefined;
    const meta = params?._meta;
    // The fetch on miss lists with the client's own session and credentials.
    const refresh = captureAuthChallenge(
      () =>
        fetchToolPages({
          url: httpUpstreamOf(guard.config).url,
          headers: forwardedCredentials(req.headers, httpUpstreamOf(guard.config).headers),
          stateless,
          ...(stateless && typeof meta === 'object' && meta !== null
            ? { meta: meta as Record<string, unknown> }
            : {}),
          timeoutMs,
        }),
      onChallenge,
    );
    return screenCall(guard, sessionKey, message.id, params, refresh);
  }

  plainHandlers.add(handle);
  return Object.assign(handle, { guard });
}
