import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { stepUpChallenge, type StepUpChallenge } from '../auth/stepUp.js';
import { resourceServerAuthOf } from '../config/index.js';
import type { GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import { injectTrace } from '../observe/tracing.js';
import { copyEndToEnd } from '../wire/httpHeaders.js';
import { isUtf8Charset, mcpBodyKind, parseMediaType } from '../wire/mediaType.js';
import { PARAM_HEADER_PREFIX } from '../wire/paramHeaders.js';
import { failurePayload, type Exchange, type UpstreamFailureReason } from './exchange.js';
import {
  expectNoBody,
  relayJsonResponse,
  sendAccepted,
  sendJson,
  UpstreamBodyError,
} from './jsonResponse.js';
import { relaySseResponse } from './sseResponse.js';
import { DeadlineWheel, newDeadline } from './deadlineWheel.js';

/** Options of {@link createStreamableHttpProxy}. */
export interface StreamableHttpProxyOptions {
  readonly url: string;
  /** Extra headers sent upstream (from the pin file), e.g. the gateway's own API key. */
  readonly headers: Readonly<Record<string, string>>;
  readonly logger: GatewayLogger;
  /** Bound on an upstream JSON answer the gateway must parse whole (and on one SSE event). */
  readonly maxResponseBytes: number;
  /** Time from sending a request to the upstream's response headers. */
  readonly timeoutMs: number;
  /** Idle time allowed between two chunks of an upstream SSE stream. */
  readonly streamIdleMs: number;
}

/** Forwards one decided client request upstream and relays the decided answer. */
export type StreamableHttpProxy = (exchange: Exchange, req: IncomingMessage, res: ServerResponse) => void;

// Headers that describe the body; the gateway frames every body it sends itself.
const REPRESENTATION = new Set([
  'content-length',
  'content-type',
  'content-encoding',
  'content-range',
  'content-location',
  'location',
  'accept-encoding',
  'expect',
]);

/**
 * The headers sent upstream: the client's end-to-end ones (Mcp-Param-* as checked), the pin's, Host, the gateway's framing,
 * and (tracing on) the traceparent of the gateway's span in place of the client's.
 */
function upstreamHeaders(
  req: IncomingMessage,
  configured: Readonly<Record<string, string>>,
  host: string,
  exchange: Exchange,
): OutgoingHttpHeaders {
  const { body } = exchange;
  // Hop-by-hop ones stay behind, with those the client's Connection header names; Mcp-Param-* go
  // upstream only as the gateway checked and wrote them (exchange.paramHeaders).
  const headers = copyEndToEnd(req.headers, notForwarded);
  if (exchange.paramHeaders !== undefined) Object.assign(headers, exchange.paramHeaders);
  Object.assign(headers, configured);
  // The upstream's DNS-rebinding protection checks Host against its own name.
  headers.host = host;
  // The gateway parses what comes back; a compressed answer could not be inspected. Removing
  // the header is not enough: without Accept-Encoding any coding is acceptable (RFC 9110 §12.5.3).
  headers['accept-encoding'] = 'identity';
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(body);
  }
  injectTrace(exchange.trace, headers);
  return headers;
}

/**
 * The upstream's response headers the client receives: end-to-end, without what describes the
 * body, and without the upstream's CORS headers (browsers are answered by the gateway's `cors`
 * block alone: an upstream's `Access-Control-Allow-Origin: *` must not widen it).
 */
function clientHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return copyEndToEnd(headers, notRelayed);
}

/** The client's headers that never go upstream as they are (besides hop-by-hop ones). */
function notForwarded(name: string): boolean {
  return REPRESENTATION.has(name) || name.startsWith(PARAM_HEADER_PREFIX);
}

/** The upstream's headers that never reach the client as they are (besides hop-by-hop ones). */
function notRelayed(name: string): boolean {
  return REPRESENTATION.has(name) || name.startsWith('access-control-');
}

/**
 * Forwards one server's MCP endpoint over a keep-alive agent with node:http. The request carries
 * only what the gateway decided on (its own serialization of the parsed messages, framed by an
 * explicit Content-Length), and the answer is decided before anything of it reaches the client:
 * JSON parsed whole, SSE event by event, anything else (a redirect, another media type, a body
 * cut short, no answer in time) answered by the gateway with an error for each forwarded request.
 */
export function createStreamableHttpProxy(options: StreamableHttpProxyOptions): StreamableHttpProxy {
  const forwarder = new StreamableHttpForwarder(options);
  return (exchange, req, res) => forwarder.forward(exchange, req, res);
}

/** One upstream's forwarder: the request it sends, and what becomes of each kind of answer. */
class StreamableHttpForwarder {
  readonly #options: StreamableHttpProxyOptions;
  readonly #target: URL;
  readonly #client: typeof http | typeof https;
  readonly #agent: http.Agent;
  readonly #hostname: string;
  readonly #port: number | undefined;
  readonly #path: string;
  readonly #bodyLimits: { readonly maxBytes: number; readonly idleMs: number; readonly wheel: DeadlineWheel };
  /** Every deadline of this server's exchanges: time to headers, idle streams and bodies. */
  readonly #wheel: DeadlineWheel;

  constructor(options: StreamableHttpProxyOptions) {
    this.#options = options;
    this.#target = new URL(options.url);
    const secure = this.#target.protocol === 'https:';
    this.#client = secure ? https : http;
    // Without a keep-alive agent every request would open a new upstream connection.
    this.#agent = secure
      ? new https.Agent({ keepAlive: true, maxSockets: 512 })
      : new http.Agent({ keepAlive: true, maxSockets: 512 });
    this.#hostname = this.#target.hostname.replace(/^\[(.*)\]$/, '$1');
    this.#port = this.#target.port === '' ? undefined : Number(this.#target.port);
    this.#path = this.#target.pathname + this.#target.search;
    this.#wheel = new DeadlineWheel(Math.min(options.timeoutMs, options.streamIdleMs));
    this.#bodyLimits = {
      maxBytes: options.maxResponseBytes,
      idleMs: options.streamIdleMs,
      wheel: this.#wheel,
    };
  }

  /** Sends the decided request upstream; the client gets the decided answer, or an error in time. */
  forward(exchange: Exchange, req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    const { telemetry } = exchange.checkpoint.alerts;
    const server = exchange.checkpoint.config.name;
    const upstreamReq = this.#client.request({
      protocol: this.#target.protocol,
      hostname: this.#hostname,
      port: this.#port,
      path: this.#path,
      method: req.method,
      agent: this.#agent,
      headers: upstreamHeaders(req, this.#options.headers, this.#target.host, exchange),
    });
    let answered = false;
    const wheel = this.#wheel;
    const deadline = newDeadline(() => {
      if (answered) return;
      answered = true;
      this.#timedOut(exchange, res);
      upstreamReq.destroy();
    });
    wheel.arm(deadline, this.#options.timeoutMs);
    // A client that leaves before its answer is whole takes the upstream request with it: no
    // answer, or a JSON body still being read (an SSE relay drops its stream itself too).
    res.on('close', () => {
      wheel.disarm(deadline);
      if (!res.writableFinished) upstreamReq.destroy();
    });
    upstreamReq.on('response', (upstream) => {
      wheel.disarm(deadline);
      if (answered) return void upstream.resume();
      answered = true;
      const seconds = (performance.now() - started) / 1000;
      telemetry.onUpstreamContact(server, { via: 'proxy', status: upstream.statusCode ?? 502, seconds });
      this.#answer(exchange, req, upstream, res);
    });
    upstreamReq.on('error', (error: NodeJS.ErrnoException) => {
      wheel.disarm(deadline);
      if (answered || res.destroyed) return;
      answered = true;
      this.#unreachable(exchange, res, error, (performance.now() - started) / 1000);
    });
    upstreamReq.end(exchange.body);
  }

  #timedOut(exchange: Exchange, res: ServerResponse): void {
    const { timeoutMs } = this.#options;
    exchange.checkpoint.alerts.telemetry.onUpstreamContact(exchange.checkpoint.config.name, {
      via: 'proxy',
      error: 'timeout',
      seconds: timeoutMs / 1000,
    });
    this.#log(exchange, 'upstream.timeout', `no answer within ${timeoutMs} ms`, 'upstream timed out');
    this.#fail(exchange, res, 504, 'timeout', `toolpin: the upstream did not answer within ${timeoutMs} ms`);
  }

  #unreachable(exchange: Exchange, res: ServerResponse, error: NodeJS.ErrnoException, seconds: number): void {
    const server = exchange.checkpoint.config.name;
    const code = error.code ?? error.message;
    exchange.checkpoint.alerts.telemetry.onUpstreamContact(server, { via: 'proxy', error: code, seconds });
    this.#options.logger.error(
      { event: 'upstream.unreachable', server, upstream: this.#target.origin, err: error.message },
      'upstream unreachable',
    );
    this.#fail(exchange, res, 502, 'unreachable', `toolpin: the upstream is unreachable (${code})`);
  }

  /** Decides the upstream's answer by its status and media type (contained: a throw fails this answer). */
  #answer(exchange: Exchange, req: IncomingMessage, upstream: IncomingMessage, res: ServerResponse): void {
    try {
      this.#decideAnswer(exchange, req, upstream, res);
    } catch (error) {
      upstream.destroy();
      this.#options.logger.error(
        { event: 'proxy.failed', server: exchange.checkpoint.config.name, err: (error as Error).message },
        'relaying an answer failed',
      );
      this.#fail(exchange, res, 502, 'malformed', 'toolpin: the upstream answer could not be relayed');
    }
  }

  #decideAnswer(
    exchange: Exchange,
    req: IncomingMessage,
    upstream: IncomingMessage,
    res: ServerResponse,
  ): void {
    const status = upstream.statusCode ?? 502;
    if (status === 404 && req.headers['mcp-session-id'] !== undefined)
      exchange.checkpoint.forgetSession(exchange.sessionKey);
    const headers = clientHeaders(upstream.headers);
    const auth = resourceServerAuthOf(exchange.checkpoint.config.auth);
    if ((status === 401 || status === 403) && auth !== undefined) {
      upstream.resume();
      // A scope the client's own token can earn: the route's challenge, so the client steps up.
      const stepUp = stepUpChallenge(auth, status, upstream.headers['www-authenticate']);
      if (stepUp !== undefined) return this.#challengeStepUp(exchange, res, stepUp);
      // The upstream refused the gateway's own credential: the client cannot fix it, so it gets no
      // challenge for the upstream, only an error naming the server.
      this.#log(
        exchange,
        'upstream.refused_credential',
        `HTTP ${status}`,
        "the upstream refused the gateway's credential",
      );
      const message = `toolpin: the upstream of ${exchange.checkpoint.config.name} refused the gateway's credential (HTTP ${status})`;
      this.#fail(exchange, res, 502, 'upstream_auth', message, { status });
      return;
    }
    if (status >= 300 && status < 400) {
      upstream.resume();
      this.#log(
        exchange,
        'upstream.refused_answer',
        `HTTP ${status}`,
        'the upstream answered with a redirect',
      );
      const message = `toolpin: the upstream answered HTTP ${status}; redirects are not followed`;
      this.#fail(exchange, res, 502, 'redirect', message);
      return;
    }
    const type = parseMediaType(upstream.headers['content-type']);
    const kind = type !== undefined && isUtf8Charset(type) ? mcpBodyKind(type) : 'other';
    if (kind === 'other' && upstream.headers['content-type'] !== undefined) {
      // A body the gateway cannot parse is refused as soon as it is announced: it is never read.
      upstream.destroy();
      const label = upstream.headers['content-type'];
      const message = `the upstream answered HTTP ${status} with a body of media type ${label}`;
      this.#refuseAnswer(
        exchange,
        res,
        status,
        headers,
        status < 300 ? 'media_type' : 'upstream_status',
        message,
      );
      return;
    }
    if (kind === 'sse' && status >= 200 && status < 300)
      this.#relaySse(exchange, req, upstream, res, headers);
    else this.#relayBody(exchange, upstream, res, headers, kind === 'json');
  }

  #relaySse(
    exchange: Exchange,
    req: IncomingMessage,
    upstream: IncomingMessage,
    res: ServerResponse,
    headers: OutgoingHttpHeaders,
  ): void {
    const { checkpoint } = exchange;
    const relay = relaySseResponse(exchange, upstream, res, {
      headers,
      idleMs: this.#options.streamIdleMs,
      wheel: this.#wheel,
      onBroken: (error) =>
        this.#log(exchange, 'upstream.stream_broken', error.message, 'upstream stream broke'),
      onDropped: (problem, reason) => {
        checkpoint.distrust(exchange.sessionKey);
        this.#log(exchange, 'upstream.invalid_message', reason, `dropped an upstream event: ${problem}`);
      },
      onIgnored: () =>
        this.#log(
          exchange,
          'upstream.invalid_message',
          'event_type',
          'dropped an upstream event of a type other than message (clients never read it as one)',
        ),
    });
    // A GET stream or a 2026-07-28 subscriptions/listen (by its body) has nothing in flight:
    // shutdown ends it at once.
    const listening = exchange.listening?.length === exchange.requestIds.length;
    const kind = req.method === 'GET' || listening ? 'listen' : 'response';
    res.once(
      'close',
      checkpoint.alerts.telemetry.onStreamOpened({ server: checkpoint.config.name, kind, end: relay.end }),
    );
  }

  /** A JSON body decided whole, or a body that must be empty (no media type given for it). */
  #relayBody(
    exchange: Exchange,
    upstream: IncomingMessage,
    res: ServerResponse,
    headers: OutgoingHttpHeaders,
    json: boolean,
  ): void {
    const status = upstream.statusCode ?? 502;
    const decided = json
      ? relayJsonResponse(exchange, upstream, res, headers, this.#bodyLimits)
      : expectNoBody(upstream, this.#bodyLimits).then(() => {
          // A reply without a body (202 to notifications, 200 to a DELETE) says only its status
          // (sendAccepted refuses one to the requests of a sessionless exchange).
          if (status < 300) return sendAccepted(exchange, res, status, headers);
          throw new UpstreamBodyError('upstream_status', `the upstream answered HTTP ${status}`);
        });
    decided.catch((error: unknown) => {
      const reason = error instanceof UpstreamBodyError ? error.reason : 'malformed';
      this.#refuseAnswer(exchange, res, status, headers, reason, (error as Error).message);
    });
  }

  /** Answers in place of an upstream answer the gateway refused; an HTTP refusal keeps its status. */
  #refuseAnswer(
    exchange: Exchange,
    res: ServerResponse,
    status: number,
    headers: OutgoingHttpHeaders,
    reason: UpstreamFailureReason,
    message: string,
  ): void {
    this.#log(exchange, 'upstream.refused_answer', reason, `refused the upstream's answer: ${message}`);
    // A 404 ends the session, a 401 with WWW-Authenticate asks for credentials: both stay what they are.
    const relayed = status >= 400 && status !== 502;
    const extra = relayed ? { status } : {};
    this.#fail(
      exchange,
      res,
      relayed ? status : 502,
      reason,
      `toolpin: ${message}`,
      extra,
      relayed ? headers : {},
    );
  }

  /** Answers the client with an error for each forwarded request (nothing of the upstream's answer). */
  /**
   * The route's own 403 `insufficient_scope` in place of the upstream's (stepUpChallenge): the
   * client asks its authorization server for a token of more scope and sends the request again.
   */
  #challengeStepUp(exchange: Exchange, res: ServerResponse, stepUp: StepUpChallenge): void {
    this.#log(
      exchange,
      'upstream.step_up',
      'insufficient_scope',
      "the upstream asked for more scope: the client was given the route's challenge",
    );
    // The gateway answers these requests itself: no later call under their ids inherits a check.
    exchange.checkpoint.forgetAnswers(exchange.sessionKey, exchange.requestIds, exchange.answers);
    if (res.headersSent) return void res.end();
    sendJson(res, 403, { 'www-authenticate': stepUp.header }, JSON.stringify(stepUp.body));
  }

  #fail(
    exchange: Exchange,
    res: ServerResponse,
    status: number,
    reason: UpstreamFailureReason,
    message: string,
    extra: Record<string, unknown> = {},
    headers: OutgoingHttpHeaders = {},
  ): void {
    exchange.checkpoint.distrust(exchange.sessionKey);
    // The gateway answers these requests itself: no later call under their ids inherits a check,
    // and a request already answered on another stream of the session is not answered again.
    const owed = exchange.checkpoint.forgetAnswers(
      exchange.sessionKey,
      exchange.requestIds,
      exchange.answers,
    );
    if (res.headersSent) {
      res.end();
      return;
    }
    const payload = failurePayload({ ...exchange, requestIds: owed }, reason, message, extra);
    sendJson(res, status, headers, JSON.stringify(payload));
  }

  #log(exchange: Exchange, event: string, err: string, message: string): void {
    this.#options.logger.warn(
      { event, server: exchange.checkpoint.config.name, session: sessionLabel(exchange.sessionKey), err },
      message,
    );
  }
}
