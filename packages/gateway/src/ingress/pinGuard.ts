import { encodeToolKey } from '@toolpin/digest';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import {
  httpUpstreamOf,
  parseServerConfig,
  resourceServerAuthOf,
  type ResourceServerAuthConfig,
  type ServerConfig,
} from '../config/index.js';
import { isScreened, screenCall } from '../checkpoint/screenCall.js';
import { SURFACES, useOfRequest } from '../policy/pinSurface.js';
import { ServerCheckpoint, type CatalogRefresh } from '../checkpoint/serverCheckpoint.js';
import { Alerts } from '../observe/alerts.js';
import { createLogger, type GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import {
  endRequest,
  injectActiveTrace,
  traceRequest,
  withTrace,
  type TracedRequest,
} from '../observe/tracing.js';
import { fetchToolPages } from '../state/fetchToolPages.js';
import { AnswerBook } from '../state/answerBook.js';
import { SessionStore } from '../state/sessionStore.js';
import { ToolDigester } from '../state/toolDigester.js';
import type { ScopeTable } from '../state/scopeTable.js';
import type { Exchange } from '../transports/exchange.js';
import { createStreamableHttpProxy, type StreamableHttpProxy } from '../transports/streamableHttpProxy.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import {
  isRequest,
  isRequestWithoutId,
  jsonRpcError,
  parseJsonRpcBody,
  type JsonRpcBody,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../wire/jsonRpc.js';
import { checkMirroredHeaders, detectEra } from '../wire/mcpEra.js';
import { checkParamHeaders } from '../wire/paramHeaders.js';
import type { SurfaceListing } from '../wire/listedSurfaces.js';
import { captureAuthChallenge, replyWithChallenge, type AuthChallenge } from './authChallenge.js';
import { replyToClient } from './clientReply.js';
import { RouteAuthenticator } from './routeAuth.js';
import { forwardedCredentials } from './forwardedCredentials.js';
import { isIdentityEncoded, readRequestBody } from './readRequestBody.js';
import { checkRequestFraming } from './requestBoundary.js';
import { refuseFraming } from './bridgeRefusals.js';
import { sessionKeyOf } from './sessionKey.js';
import { listWithoutSession, SESSION_REQUIRED_MESSAGE } from './sessionRequired.js';
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
  /** The principals' scopes (a gateway's, docs/scopes.md); the request's principal is set by the gateway's routes. @default none */
  readonly scopes?: ScopeTable;
  /** @default a pino logger on stdout */
  readonly logger?: GatewayLogger;
  /** Shared with other pinGuards of one gateway; by default each pinGuard has its own. */
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

/** Express middleware that enforces one server's pin, with its checkpoint exposed for reload and status. */
export type PinGuardRouter = RequestHandler & {
  readonly checkpoint: ServerCheckpoint;
  /** @deprecated The same object as `checkpoint` (its earlier name). */
  readonly guard: ServerCheckpoint;
};

/** A handler of one server's `/mcp` route as a PinGuardRouter: its checkpoint exposed (and under its earlier name). */
export function withCheckpoint(handle: RequestHandler, checkpoint: ServerCheckpoint): PinGuardRouter {
  return Object.assign(handle, { checkpoint, guard: checkpoint });
}

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

/** Headers of a listing the gateway sends for a traced request: its traceparent added (tracing on). */
function tracedHeaders(headers: Record<string, string>): Record<string, string> {
  injectActiveTrace(headers);
  return headers;
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
  const handler = new PinGuardHandler(options);
  // A plain handler rather than an express Router: one path, two kinds of request, and the
  // router's per-request work was most of what express cost here.
  // A resource-server pin is verified here too (embedded without createGateway), once per request.
  const handle = (req: Request, res: Response, next: NextFunction): void => {
    const authenticator = handler.authenticator();
    if (authenticator === undefined) handler.handle(req, res, next);
    else authenticator.admit(req, res, () => handler.handle(req, res, next));
  };
  plainHandlers.add(handle);
  return withCheckpoint(handle, handler.checkpoint);
}

/** The messages of one POST, decided (filled in order as they are): what goes upstream, what is answered here. */
interface DecidedBody {
  readonly forward: JsonRpcMessage[];
  readonly refused: JsonRpcResponse[];
  /** The upstream refused the client's credential while the gateway listed on its behalf. */
  challenge: AuthChallenge | undefined;
  /** A 2025-era call without a session, and the upstream would not list without one. */
  sessionRequired: boolean;
  /** The spans of the requests forwarded (tracing on), ended when the answer is sent. */
  readonly traced: TracedRequest[];
  /** The listings that failed while deciding this body, by surface (see #decideRequest). */
  failedListings?: Map<SurfaceListing, { readonly error: unknown }>;
}

/** What one request's decision is: refused (its error), a session required first, or forwarded (undefined). */
type RequestDecision = JsonRpcResponse | 'session_required' | undefined;

/**
 * Records one request's decision in its body (its span ended unless it goes upstream); true when it
 * ends the body's decisions (a session is required first: nothing of the body goes upstream).
 */
function record(
  decided: DecidedBody,
  message: JsonRpcMessage,
  span: TracedRequest | undefined,
  decision: RequestDecision,
): boolean {
  if (decision === 'session_required') {
    endRequest(span);
    decided.sessionRequired = true;
    return true;
  }
  if (decision !== undefined) {
    decided.refused.push(decision);
    endRequest(span, decision);
    return false;
  }
  if (span !== undefined) decided.traced.push(span);
  decided.forward.push(message);
  return false;
}

/** Runs `work`, handing a throw or a rejection to `next`. */
function contained(work: () => void | Promise<void>, next: NextFunction): void {
  try {
    work()?.catch(next);
  } catch (error) {
    next(error);
  }
}

/** Whose a request is: its catalog's key, the book its answer is awaited in (sessionless: the exchange's), its era. */
interface RequestScope {
  readonly sessionKey: string;
  readonly answers: AnswerBook | undefined;
  readonly stateless: boolean;
}

/** One server's HTTP front: frames and parses each request, decides it, forwards what it decided. */
class PinGuardHandler {
  readonly checkpoint: ServerCheckpoint;
  #gate: { readonly auth: ResourceServerAuthConfig; readonly authenticator: RouteAuthenticator } | undefined;
  readonly #logger: GatewayLogger;
  readonly #maxBodyBytes: number;
  readonly #timeoutMs: number;
  readonly #proxy: StreamableHttpProxy;
  // A compressed body (rare) still goes through express.raw, which inflates it.
  readonly #inflatingParser: RequestHandler;

  constructor(options: PinGuardOptions) {
    const config = toServerConfig(options.pin, options.upstream);
    this.#logger = options.logger ?? createLogger();
    this.checkpoint = new ServerCheckpoint({
      config,
      sessions: options.sessions ?? new SessionStore(),
      digester: options.digester ?? new ToolDigester(),
      alerts: options.alerts ?? new Alerts(this.#logger),
      logger: this.#logger,
      ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
    });
    this.#maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    const http = httpUpstreamOf(config);
    this.#proxy = createStreamableHttpProxy({
      url: http.url,
      headers: http.headers,
      logger: this.#logger,
      maxResponseBytes: DEFAULT_MAX_UPSTREAM_BYTES,
      timeoutMs: this.#timeoutMs,
      streamIdleMs: options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS,
    });
    this.#inflatingParser = express.raw({ type: () => true, limit: this.#maxBodyBytes });
  }

  /** The gate of the pin in force, when it is a resource server (docs/oauth.md); kept while its block is. */
  authenticator(): RouteAuthenticator | undefined {
    const { config } = this.checkpoint;
    const auth = resourceServerAuthOf(config.auth);
    if (auth === undefined) return undefined;
    if (this.#gate?.auth !== auth)
      this.#gate = { auth, authenticator: new RouteAuthenticator(config, auth, this.#logger) };
    return this.#gate.authenticator;
  }

  handle(req: Request, res: Response, next: NextFunction): void {
    const fail = (error: unknown): void =>
      this.#rejectRequest(error as Error & { status?: number; type?: string }, req, res, next);
    try {
      if (pathOf(req.url) !== '/') return next();
      const refusal = checkRequestFraming(req);
      if (refusal !== undefined)
        refuseFraming(res, refusal, {
          logger: this.#logger,
          server: this.checkpoint.config.name,
          method: req.method,
        });
      else if (req.method === 'POST') this.#receivePost(req, res, fail);
      else this.#forwardOther(req, res);
    } catch (error) {
      fail(error);
    }
  }

  #receivePost(req: Request, res: Response, next: NextFunction): void {
    if (!isIdentityEncoded(req)) {
      this.#inflatingParser(req, res, (error?: unknown) =>
        error === undefined ? contained(() => this.#handlePost(req, res, req.body), next) : next(error),
      );
      return;
    }
    // The body is handed on, not set on the request: a property added to node's IncomingMessage
    // gives it another shape under node's own stream code.
    readRequestBody(req, this.#maxBodyBytes, (error, body) =>
      error === undefined ? contained(() => this.#handlePost(req, res, body), next) : next(error),
    );
  }

  /** A GET (the session's stream) or a DELETE (its end): no body, nothing to decide but the answer. */
  #forwardOther(req: Request, res: Response): void {
    const { checkpoint } = this;
    checkpoint.alerts.telemetry.onRequest(checkpoint.config.name, req.method);
    const sessionKey = sessionKeyOf(req.headers);
    if (req.method === 'DELETE')
      res.on('finish', () => res.statusCode < 300 && checkpoint.forgetSession(sessionKey));
    this.#proxy(
      { checkpoint, sessionKey, body: undefined, requestIds: [], refused: [], batch: false },
      req,
      res,
    );
  }

  #rejectRequest(
    error: Error & { status?: number; type?: string },
    req: Request,
    res: Response,
    next: NextFunction,
  ): void {
    if (res.headersSent) return next(error);
    const status = error.status ?? 500;
    const message =
      error.type === 'entity.too.large'
        ? `Request body exceeds ${this.#maxBodyBytes} bytes`
        : status === 500
          ? 'toolpin internal error'
          : error.message;
    this.#logger[status >= 500 ? 'error' : 'warn'](
      { event: 'request.rejected', server: this.checkpoint.config.name, status, err: error.message },
      message,
    );
    // A body the gateway could not read (too large, cut short, not inflatable) is the client's bad
    // request; only the gateway's own failure is an internal error.
    const code = status >= 500 ? ErrorCodes.INTERNAL_ERROR : ErrorCodes.INVALID_REQUEST;
    replyToClient(req.headers, res, status, jsonRpcError(null, code, message));
  }

  /** Parses and decides one POST; most are decided at once (no promise), a call that lists first later. */
  #handlePost(req: Request, res: Response, received: unknown): void | Promise<void> {
    const raw = Buffer.isBuffer(received) ? received : Buffer.alloc(0);
    const parsed = parseJsonRpcBody(raw.toString('utf8'));
    const server = this.checkpoint.config.name;
    if (!parsed.ok) {
      this.#logger.warn({ event: 'request.malformed', server, code: parsed.code }, parsed.message);
      replyToClient(req.headers, res, 400, jsonRpcError(parsed.id, parsed.code, parsed.message, parsed.data));
      return;
    }
    const paramHeaders = this.#checkHeaders(req, res, parsed.body);
    if (paramHeaders === undefined) return;
    const sessionKey = sessionKeyOf(req.headers);
    // Without a session (2026-07-28, or a 2025 initialize) the answers are this exchange's alone:
    // other callers with the same credential use the same ids at the same time.
    const answers = req.headers['mcp-session-id'] === undefined ? new AnswerBook() : undefined;
    const scope: RequestScope = { sessionKey, answers, stateless: detectEra(req.headers) === 'stateless' };
    const decided = this.#decideMessages(req, scope, parsed.body.messages);
    const sent = { scope, batch: parsed.body.batch, paramHeaders };
    if (decided instanceof Promise) return decided.then((body) => this.#answerDecided(req, res, sent, body));
    this.#answerDecided(req, res, sent, decided);
  }

  /** Answers what the gateway decided itself, and forwards the rest (the gateway's own serialization of it). */
  #answerDecided(
    req: Request,
    res: Response,
    sent: {
      readonly scope: RequestScope;
      readonly batch: boolean;
      readonly paramHeaders: Readonly<Record<string, string>>;
    },
    decided: DecidedBody,
  ): void {
    if (res.destroyed) return this.#clientLeft(sent.scope, decided);
    const server = this.checkpoint.config.name;
    const { sessionKey, answers } = sent.scope;
    const { forward, refused, challenge, traced } = decided;
    // A forwarded request's span lasts until its answer is sent (or the client left).
    if (traced.length > 0) res.once('close', () => traced.forEach((span) => endRequest(span)));
    if (decided.sessionRequired) {
      // The answer of the bridged routes too: nothing goes upstream (docs/boundary.md#sessions).
      this.#logger.info(
        { event: 'request.session_required', server },
        'a call without a session: initialize first',
      );
      replyToClient(
        req.headers,
        res,
        400,
        jsonRpcError(null, ErrorCodes.SESSION_REQUIRED, SESSION_REQUIRED_MESSAGE),
      );
      return;
    }
    const answer = sent.batch ? refused : refused[0];
    if (challenge !== undefined && refused.length > 0) {
      // The upstream refused this client's credential: the client gets its challenge, nothing goes upstream.
      replyWithChallenge(req.headers, res, this.checkpoint.config, challenge, answer);
      return;
    }
    if (forward.length === 0) {
      // Nothing left to forward and nothing to answer (only dropped notifications): accepted.
      if (refused.length === 0) res.writeHead(202).end();
      else replyToClient(req.headers, res, 200, answer);
      return;
    }
    // What goes upstream is the gateway's serialization of the messages it decided on, never the
    // client's bytes: duplicate keys, odd spacing or encodings cannot mean one thing here and
    // another there.
    const body = JSON.stringify(sent.batch ? forward : forward[0]);
    // The forwarded requests' ids, and those of them that only listen (owed nothing: Exchange.listening).
    const requestIds: JsonRpcId[] = [];
    let listening: JsonRpcId[] | undefined;
    for (const message of forward) {
      if (!isRequest(message)) continue;
      requestIds.push(message.id);
      if (message.method === 'subscriptions/listen') (listening ??= []).push(message.id);
    }
    const exchange: Exchange = {
      checkpoint: this.checkpoint,
      sessionKey,
      ...(answers === undefined ? {} : { answers }),
      body,
      requestIds,
      ...(listening === undefined ? {} : { listening }),
      refused,
      batch: sent.batch,
      paramHeaders: sent.paramHeaders,
      ...(traced[0] === undefined ? {} : { trace: traced[0] }),
    };
    // The answer's decisions (a result checked against its outputSchema) are children of the span.
    withTrace(traced[0], () => this.#proxy(exchange, req, res));
  }

  /**
   * The client left while its body waited for a listing (fetch on miss): as once a request is sent
   * (the proxy destroys it when its client leaves), the client takes it with it. Nothing goes
   * upstream, nothing is awaited under its ids, its spans end.
   */
  #clientLeft({ sessionKey, answers }: RequestScope, { forward, traced }: DecidedBody): void {
    traced.forEach((span) => endRequest(span));
    const ids = forward.filter(isRequest).map((message) => message.id);
    this.checkpoint.forgetAnswers(sessionKey, ids, answers);
  }

  /**
   * Checks the headers that mirror the body (MCP 2026-07-28): Mcp-Method / Mcp-Name, and each
   * Mcp-Param-* against the argument and the pinned tool's x-mcp-header designation. Returns the
   * Mcp-Param-* headers to forward, or undefined once it answered the disagreement (400, -32020).
   */
  #checkHeaders(
    req: Request,
    res: Response,
    body: JsonRpcBody,
  ): Readonly<Record<string, string>> | undefined {
    const { config } = this.checkpoint;
    const mirrored = checkMirroredHeaders(req.headers, body);
    const checked =
      mirrored === undefined
        ? checkParamHeaders(
            req.headers,
            body,
            (name) => config.definitions[encodeToolKey(name)]?.inputSchema,
            detectEra(req.headers) === 'stateless',
          )
        : { ok: false as const, problem: mirrored };
    if (checked.ok) return checked.headers;
    const first = body.messages[0];
    const id = first !== undefined && 'id' in first && first.id !== undefined ? first.id : null;
    this.#logger.warn({ event: 'request.header_mismatch', server: config.name }, checked.problem);
    replyToClient(req.headers, res, 400, jsonRpcError(id, ErrorCodes.HEADER_MISMATCH, checked.problem));
    return undefined;
  }

  /**
   * Decides each message of a body in order: calls screened, listings expected, the rest forwarded.
   * Synchronous while each decision is (the usual call, decided from the session's catalog); from a
   * request that must list first, the rest waits for it, still in order.
   */
  #decideMessages(
    req: Request,
    scope: RequestScope,
    messages: readonly JsonRpcMessage[],
  ): DecidedBody | Promise<DecidedBody> {
    const decided: DecidedBody = {
      forward: [],
      refused: [],
      challenge: undefined,
      sessionRequired: false,
      traced: [],
    };
    return this.#decideFrom(req, scope, messages, 0, decided);
  }

  #decideFrom(
    req: Request,
    scope: RequestScope,
    messages: readonly JsonRpcMessage[],
    from: number,
    decided: DecidedBody,
  ): DecidedBody | Promise<DecidedBody> {
    const { checkpoint } = this;
    for (let index = from; index < messages.length; index++) {
      const message = messages[index] as JsonRpcMessage;
      if ('method' in message && typeof message.method === 'string')
        checkpoint.alerts.telemetry.onRequest(checkpoint.config.name, message.method);
      if (isRequestWithoutId(message)) {
        this.#dropRequestWithoutId(scope.sessionKey, message.method);
        continue;
      }
      if (!isRequest(message)) {
        decided.forward.push(message);
        continue;
      }
      const front = scope.stateless ? 'stateless' : 'streamable-http';
      const span = traceRequest(front, checkpoint.config.name, message);
      const decision = withTrace(span, () => this.#decideRequest(req, scope, message, decided));
      if (decision instanceof Promise)
        return decision.then((settled) =>
          record(decided, message, span, settled)
            ? decided
            : this.#decideFrom(req, scope, messages, index + 1, decided),
        );
      if (record(decided, message, span, decision)) return decided;
    }
    return decided;
  }

  /**
   * Decides one request: a screened one (tools/call, a pinned prompts/get or completion/complete) is refused (its error)
   * or allowed (undefined); any other is expected (its answer inspected) and forwarded. A promise
   * only when the request must wait for a listing (fetch on miss, or a 2025-era call without a session).
   */
  #decideRequest(
    req: Request,
    { sessionKey, answers, stateless }: RequestScope,
    message: JsonRpcRequest & { id: JsonRpcId },
    decided: DecidedBody,
  ): RequestDecision | Promise<RequestDecision> {
    const { checkpoint } = this;
    if (!isScreened(checkpoint, message.method, message.params)) {
      checkpoint.expectAnswer(sessionKey, message.id, message.method, message.params, answers);
      return undefined;
    }
    const { spec, name } = useOfRequest(message.method, message.params) ?? {
      spec: SURFACES.tools,
      name: undefined,
    };
    // Built only if a listing is needed: most calls are decided from the session's catalog.
    const refresh: CatalogRefresh = (listing) => {
      // A listing that failed answers the body's later calls of that surface too: a batch of N
      // calls lists in vain once, not N times (each up to the upstream's timeout).
      const failed = decided.failedListings?.get(listing);
      if (failed !== undefined) return Promise.reject(failed.error);
      const onChallenge = (seen: AuthChallenge): void => {
        decided.challenge = seen;
      };
      return this.#refreshFor(
        req,
        stateless,
        message.params?._meta,
        onChallenge,
      )(listing).catch((error: unknown) => {
        (decided.failedListings ??= new Map()).set(listing, { error });
        throw error;
      });
    };
    const screen = (ready: CatalogRefresh): RequestDecision | Promise<RequestDecision> =>
      screenCall(checkpoint, sessionKey, message.id, message.params, ready, message.method, answers);
    // A 2025-era request without a session lists first: an upstream that needs one is answered
    // as the bridged routes answer (nothing screened, nothing forwarded).
    const ready = listWithoutSession(
      req.headers,
      !stateless && typeof name === 'string' && !checkpoint.knowsCatalogFor(sessionKey, name, spec),
      refresh,
      spec,
    );
    if (!(ready instanceof Promise)) return screen(ready);
    return ready.then((listed) => (listed === 'session_required' ? listed : screen(listed)));
  }

  /** The fetch on miss of a call: it lists with the client's own session and credentials. */
  #refreshFor(
    req: Request,
    stateless: boolean,
    meta: unknown,
    onChallenge: (challenge: AuthChallenge) => void,
  ): CatalogRefresh {
    const upstream = httpUpstreamOf(this.checkpoint.config);
    return captureAuthChallenge(
      (listing) =>
        fetchToolPages({
          listing,
          url: upstream.url,
          headers: tracedHeaders(forwardedCredentials(req.headers, upstream.headers)),
          stateless,
          ...(stateless && typeof meta === 'object' && meta !== null
            ? { meta: meta as Record<string, unknown> }
            : {}),
          timeoutMs: this.#timeoutMs,
        }),
      onChallenge,
    );
  }

  /** Logs a request sent without an id (see isRequestWithoutId): dropped, never forwarded. */
  #dropRequestWithoutId(sessionKey: string, method: string): void {
    this.#logger.warn(
      {
        event: 'request.dropped',
        server: this.checkpoint.config.name,
        session: sessionLabel(sessionKey),
        method,
      },
      `dropped a ${method} request sent without an id: it is never forwarded`,
    );
  }
}
