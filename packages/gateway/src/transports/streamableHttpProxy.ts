import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import { copyEndToEnd } from '../wire/httpHeaders.js';
import { isUtf8Charset, mcpBodyKind, parseMediaType } from '../wire/mediaType.js';
import { failurePayload, type Exchange, type UpstreamFailureReason } from './exchange.js';
import {
  expectNoBody,
  relayJsonResponse,
  sendAccepted,
  sendJson,
  UpstreamBodyError,
} from './jsonResponse.js';
import { relaySseResponse } from './sseResponse.js';

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

/** The headers sent upstream: the client's end-to-end ones, the pin's, Host, and the gateway's framing. */
function upstreamHeaders(
  req: IncomingMessage,
  configured: Readonly<Record<string, string>>,
  host: string,
  body: Buffer | undefined,
): OutgoingHttpHeaders {
  // Hop-by-hop ones stay behind, with those the client's Connection header names.
  const headers = copyEndToEnd(req.headers);
  for (const name of REPRESENTATION) delete headers[name];
  Object.assign(headers, configured);
  // The upstream's DNS-rebinding guard checks Host against its own name.
  headers.host = host;
  // The gateway parses what comes back; a compressed answer could not be inspected. Removing
  // the header is not enough: without Accept-Encoding any coding is acceptable (RFC 9110 §12.5.3).
  headers['accept-encoding'] = 'identity';
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = body.length;
  }
  return headers;
}

/** The upstream's response headers the client receives: end-to-end, without what describes the body. */
function clientHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out = copyEndToEnd(headers);
  for (const name of REPRESENTATION) delete out[name];
  return out;
}

/**
 * Forwards one server's MCP endpoint over a keep-alive agent with node:http. The request carries
 * only what the gateway decided on (its own serialization of the parsed messages, framed by an
 * explicit Content-Length), and the answer is decided before anything of it reaches the client:
 * JSON parsed whole, SSE event by event, anything else (a redirect, another media type, a body
 * cut short, no answer in time) answered by the gateway with an error for each forwarded request.
 */
export function createStreamableHttpProxy(options: StreamableHttpProxyOptions): StreamableHttpProxy {
  const target = new URL(options.url);
  const secure = target.protocol === 'https:';
  const client = secure ? https : http;
  // Without a keep-alive agent every request would open a new upstream connection.
  const agent = secure
    ? new https.Agent({ keepAlive: true, maxSockets: 512 })
    : new http.Agent({ keepAlive: true, maxSockets: 512 });
  const hostname = target.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = target.port === '' ? undefined : Number(target.port);
  const path = target.pathname + target.search;
  const { logger } = options;
  const bodyLimits = { maxBytes: options.maxResponseBytes, idleMs: options.streamIdleMs };

  function log(exchange: Exchange, event: string, err: string, message: string): void {
    logger.warn(
      { event, server: exchange.guard.config.name, session: sessionLabel(exchange.sessionKey), err },
      message,
    );
  }

  /** Answers the client with an error for each forwarded request (nothing of the upstream's answer). */
  function fail(
    exchange: Exchange,
    res: ServerResponse,
    status: number,
    reason: UpstreamFailureReason,
    message: string,
    extra: Record<string, unknown> = {},
    headers: OutgoingHttpHeaders = {},
  ): void {
    exchange.guard.distrust(exchange.sessionKey);
    // The gateway answers these requests itself: no later call under their ids inherits a check.
    exchange.guard.forgetCalls(exchange.sessionKey, exchange.requestIds);
    if (res.headersSent) {
      res.end();
      return;
    }
    sendJson(res, status, headers, JSON.stringify(failurePayload(exchange, reason, message, extra)));
  }

  function onResponse(
    exchange: Exchange,
    req: IncomingMessage,
    upstream: IncomingMessage,
    res: ServerResponse,
  ): void {
    const { guard } = exchange;
    const status = upstream.statusCode ?? 502;
    if (status === 404 && req.headers['mcp-session-id'] !== undefined)
      guard.forgetSession(exchange.sessionKey);
    const headers = clientHeaders(upstream.headers);
    if (status >= 300 && status < 400) {
      upstream.resume();
      log(exchange, 'upstream.refused_answer', `HTTP ${status}`, 'the upstream answered with a redirect');
      fail(
        exchange,
        res,
        502,
        'redirect',
        `toolpin: the upstream answered HTTP ${status}; redirects are not followed`,
      );
      return;
    }
    const type = parseMediaType(upstream.headers['content-type']);
    const kind = type !== undefined && isUtf8Charset(type) ? mcpBodyKind(type) : 'other';
    if (kind === 'other' && upstream.headers['content-type'] !== undefined) {
      // A body the gateway cannot parse is refused as soon as it is announced: it is never read.
      upstream.destroy();
      const label = upstream.headers['content-type'];
      const reason = status < 300 ? 'media_type' : 'upstream_status';
      const message = `the upstream answered HTTP ${status} with a body of media type ${label}`;
      log(exchange, 'upstream.refused_answer', reason, `refused the upstream's answer: ${message}`);
      refuseAnswer(exchange, res, status, headers, reason, message);
      return;
    }
    const broken = (error: Error): void =>
      log(exchange, 'upstream.stream_broken', error.message, 'upstream stream broke');
    if (kind === 'sse' && status >= 200 && status < 300) {
      const relay = relaySseResponse(exchange, upstream, res, {
        headers,
        idleMs: options.streamIdleMs,
        onBroken: broken,
        onDropped: (problem, reason) => {
          guard.distrust(exchange.sessionKey);
          log(exchange, 'upstream.invalid_message', reason, `dropped an upstream event: ${problem}`);
        },
      });
      // A GET stream or a 2026-07-28 subscriptions/listen has nothing in flight: shutdown ends it at once.
      const streamKind =
        req.method === 'GET' || req.headers['mcp-method'] === 'subscriptions/listen' ? 'listen' : 'response';
      res.once(
        'close',
        guard.alerts.telemetry.onStreamOpened({
          server: guard.config.name,
          kind: streamKind,
          end: relay.end,
        }),
      );
      return;
    }
    const decided =
      kind === 'json'
        ? relayJsonResponse(exchange, upstream, res, headers, bodyLimits)
        : expectNoBody(upstream, bodyLimits.idleMs).then(() => {
            // A reply without a body (202 to notifications, 200 to a DELETE) says only its status.
            if (status < 300) return sendAccepted(exchange, res, status, headers);
            throw new UpstreamBodyError('upstream_status', `the upstream answered HTTP ${status}`);
          });
    decided.catch((error: unknown) => {
      const reason = error instanceof UpstreamBodyError ? error.reason : 'malformed';
      const message = (error as Error).message;
      log(exchange, 'upstream.refused_answer', reason, `refused the upstream's answer: ${message}`);
      refuseAnswer(exchange, res, status, headers, reason, message);
    });
  }

  /** Answers in place of an upstream answer the gateway refused; an HTTP refusal keeps its status. */
  function refuseAnswer(
    exchange: Exchange,
    res: ServerResponse,
    status: number,
    headers: OutgoingHttpHeaders,
    reason: UpstreamFailureReason,
    message: string,
  ): void {
    // A 404 ends the session, a 401 with WWW-Authenticate asks for credentials: both stay what they are.
    const relayed = status >= 400 && status !== 502;
    fail(
      exchange,
      res,
      relayed ? status : 502,
      reason,
      `toolpin: ${message}`,
      relayed ? { status } : {},
      relayed ? headers : {},
    );
  }

  return (exchange, req, res) => {
    const started = performance.now();
    const telemetry = exchange.guard.alerts.telemetry;
    const server = exchange.guard.config.name;
    const upstreamReq = client.request({
      protocol: target.protocol,
      hostname,
      port,
      path,
      method: req.method,
      agent,
      headers: upstreamHeaders(req, options.headers, target.host, exchange.body),
    });
    let answered = false;
    const timer = setTimeout(() => {
      if (answered) return;
      answered = true;
      telemetry.onUpstreamContact(server, {
        via: 'proxy',
        error: 'timeout',
        seconds: options.timeoutMs / 1000,
      });
      log(exchange, 'upstream.timeout', `no answer within ${options.timeoutMs} ms`, 'upstream timed out');
      fail(
        exchange,
        res,
        504,
        'timeout',
        `toolpin: the upstream did not answer within ${options.timeoutMs} ms`,
      );
      upstreamReq.destroy();
    }, options.timeoutMs);
    // A client that leaves before the answer takes the upstream request with it (after the answer
    // started, the relays drop the upstream stream themselves).
    res.on('close', () => {
      clearTimeout(timer);
      if (!answered) upstreamReq.destroy();
    });
    upstreamReq.on('response', (upstream) => {
      clearTimeout(timer);
      if (answered) return void upstream.resume();
      answered = true;
      telemetry.onUpstreamContact(server, {
        via: 'proxy',
        status: upstream.statusCode ?? 502,
        seconds: (performance.now() - started) / 1000,
      });
      try {
        onResponse(exchange, req, upstream, res);
      } catch (error) {
        upstream.destroy();
        logger.error(
          { event: 'proxy.failed', server, err: (error as Error).message },
          'relaying an answer failed',
        );
        fail(exchange, res, 502, 'malformed', 'toolpin: the upstream answer could not be relayed');
      }
    });
    upstreamReq.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (answered || res.destroyed) return;
      answered = true;
      const code = error.code ?? error.message;
      telemetry.onUpstreamContact(server, {
        via: 'proxy',
        error: code,
        seconds: (performance.now() - started) / 1000,
      });
      logger.error(
        { event: 'upstream.unreachable', server, upstream: target.origin, err: error.message },
        'upstream unreachable',
      );
      fail(exchange, res, 502, 'unreachable', `toolpin: the upstream is unreachable (${code})`);
    });
    upstreamReq.end(exchange.body);
  };
}
