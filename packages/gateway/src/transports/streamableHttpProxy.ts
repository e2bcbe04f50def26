import http from 'node:http';
import https from 'node:https';
import { createProxyMiddleware, proxyEventsPlugin } from 'http-proxy-middleware';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { copyEndToEnd, responseHeadersFrom } from '../wire/httpHeaders.js';
import { jsonRpcError } from '../wire/jsonRpc.js';
import { exchangeOf, type Exchange } from './exchange.js';
import { relayJsonResponse } from './jsonResponse.js';
import { relaySseResponse } from './sseResponse.js';

/** Options of {@link createStreamableHttpProxy}. */
export interface StreamableHttpProxyOptions {
  readonly url: string;
  /** Extra headers sent upstream (from the pin file), e.g. the gateway's own API key. */
  readonly headers: Readonly<Record<string, string>>;
  readonly logger: GatewayLogger;
  /** Bound on an upstream JSON answer the gateway must parse whole. */
  readonly maxResponseBytes: number;
}

// When each proxied request left for the upstream, for the latency histogram.
const proxyStarted = new WeakMap<IncomingMessage, number>();

function elapsedSince(req: IncomingMessage): number {
  const started = proxyStarted.get(req);
  return started === undefined ? 0 : (performance.now() - started) / 1000;
}

/** Answers every forwarded request with an upstream error, in JSON (nothing was sent yet). */
function answerUpstreamFailure(exchange: Exchange | undefined, res: ServerResponse, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const ids = exchange?.requestIds ?? [];
  const errors = ids.map((id) => jsonRpcError(id, ErrorCodes.UPSTREAM_UNAVAILABLE, message));
  const payload = exchange?.batch
    ? [...errors, ...(exchange.injected ?? [])]
    : (errors[0] ?? jsonRpcError(null, ErrorCodes.UPSTREAM_UNAVAILABLE, message));
  res.writeHead(502, { 'content-type': 'application/json' });
  res.end(JSON.stringify(payload));
}

/** Forwards one client request upstream and relays the answer (see {@link createStreamableHttpProxy}). */
export type StreamableHttpProxy = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: unknown,
) => Promise<void>;

/** The upstream request's headers: the client's end-to-end ones, the pin's, Host for the upstream. */
function upstreamHeaders(
  req: IncomingMessage,
  configured: Readonly<Record<string, string>>,
  host: string,
  body: Buffer | undefined,
): OutgoingHttpHeaders {
  // Hop-by-hop ones stay behind, with those the client's Connection header names.
  const headers = Object.assign(copyEndToEnd(req.headers), configured);
  // The upstream's DNS-rebinding guard checks Host against its own name.
  headers.host = host;
  // The gateway parses what comes back; a compressed answer could not be inspected. Removing
  // the header is not enough: without Accept-Encoding any coding is acceptable (RFC 9110 §12.5.3).
  headers['accept-encoding'] = 'identity';
  if (body !== undefined) {
    // The body the gateway read is replayed as plain bytes (a compressed one was inflated).
    delete headers['content-encoding'];
    headers['content-length'] = body.length;
  }
  return headers;
}

/**
 * Forwards one server's MCP endpoint over a keep-alive agent: the request body the gateway already
 * parsed is replayed (other requests stream through), Host is rewritten for the upstream's
 * DNS-rebinding guard, and the response is relayed by the gateway itself so listings are verified
 * and SSE streams pass event by event.
 */
export function createStreamableHttpProxy(options: StreamableHttpProxyOptions): StreamableHttpProxy {
  const target = new URL(options.url);
  const secure = target.protocol === 'https:';
  // Without a keep-alive agent every request would open a new upstream connection.
  const agent = secure
    ? new https.Agent({ keepAlive: true, maxSockets: 512 })
    : new http.Agent({ keepAlive: true, maxSockets: 512 });
  const { logger } = options;

  function onResponse(proxyRes: IncomingMessage, req: IncomingMessage, res: ServerResponse): void {
    const exchange = exchangeOf(req);
    const type = proxyRes.headers['content-type'] ?? '';
    const status = proxyRes.statusCode ?? 502;
    if (exchange !== undefined)
      exchange.guard.alerts.telemetry.onUpstreamContact(exchange.guard.config.name, {
        via: 'proxy',
        status,
        seconds: elapsedSince(req),
      });
    if (exchange !== undefined && status === 404 && req.headers['mcp-session-id'] !== undefined) {
      exchange.guard.forgetSession(exchange.sessionKey);
    }
    const onBroken = (error: Error): void => {
      logger.warn(
        {
          event: 'upstream.stream_broken',
          server: exchange?.guard.config.name,
          session: exchange && sessionLabel(exchange.sessionKey),
          err: error.message,
        },
        'upstream stream broke',
      );
    };
    if (exchange !== undefined && type.includes('text/event-stream')) {
      const relay = relaySseResponse(exchange, proxyRes, res, onBroken);
      // A GET stream or a 2026-07-28 subscriptions/listen has nothing in flight: shutdown ends it at once.
      const kind =
        req.method === 'GET' || req.headers['mcp-method'] === 'subscriptions/listen' ? 'listen' : 'response';
      res.once(
        'close',
        exchange.guard.alerts.telemetry.onStreamOpened({
          server: exchange.guard.config.name,
          kind,
          end: relay.end,
        }),
      );
      return;
    }
    if (
      exchange !== undefined &&
      type.includes('application/json') &&
      (exchange.hasList || exchange.injected.length > 0)
    ) {
      relayJsonResponse(exchange, proxyRes, res, options.maxResponseBytes).catch((error: Error) => {
        onBroken(error);
        answerUpstreamFailure(
          exchange,
          res,
          `toolpin: the upstream answer could not be read: ${error.message}`,
        );
      });
      return;
    }
    if (exchange !== undefined && exchange.injected.length > 0 && status === 202) {
      // Only notifications went upstream; the refused requests still need their answers.
      proxyRes.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(exchange.batch ? exchange.injected : exchange.injected[0]));
      return;
    }
    res.writeHead(status, responseHeadersFrom(proxyRes.headers, false));
    proxyRes.pipe(res);
  }

  function onError(error: NodeJS.ErrnoException, req: IncomingMessage, res: ServerResponse): void {
    // The client left first and the request was dropped with it: nobody to answer.
    if (res.destroyed && !res.writableFinished) return;
    const exchange = exchangeOf(req);
    const code = error.code ?? error.message;
    exchange?.guard.alerts.telemetry.onUpstreamContact(exchange.guard.config.name, {
      via: 'proxy',
      error: code,
      seconds: elapsedSince(req),
    });
    logger.error(
      {
        event: 'upstream.unreachable',
        server: exchange?.guard.config.name,
        upstream: target.origin,
        err: error.message,
      },
      'upstream unreachable',
    );
    answerUpstreamFailure(exchange, res, `toolpin: the upstream is unreachable (${code})`);
  }

  // http-proxy-middleware forwards; the gateway only shapes the request and relays the answer itself
  // (selfHandleResponse), so listings are verified and SSE passes event by event.
  const forward = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: options.url,
    ignorePath: true,
    selfHandleResponse: true,
    agent,
    ejectPlugins: true,
    plugins: [proxyEventsPlugin],
    on: {
      proxyReq: (proxyReq, req, res) => {
        const body = exchangeOf(req)?.body;
        // A client that leaves before the answer takes the upstream request with it (after the
        // answer started, the relays drop the upstream stream themselves).
        res.on('close', () => {
          if (!res.writableFinished) proxyReq.destroy();
        });
        // The outgoing headers are exactly the gateway's: end-to-end ones, the pin's, Host for the upstream.
        for (const name of proxyReq.getHeaderNames()) proxyReq.removeHeader(name);
        for (const [name, value] of Object.entries(
          upstreamHeaders(req, options.headers, target.host, body),
        )) {
          if (value !== undefined) proxyReq.setHeader(name, value);
        }
        // The body the gateway already read is replayed; the consumed request then ends the upload.
        if (body !== undefined) proxyReq.write(body);
      },
      proxyRes: (proxyRes, req, res) => onResponse(proxyRes, req, res),
      error: (error, req, res) => {
        if ('writeHead' in res) onError(error as NodeJS.ErrnoException, req, res);
        else res.destroy();
      },
    },
  });

  return async (req, res) => {
    proxyStarted.set(req, performance.now());
    await forward(req, res, () => undefined);
  };
}
