import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One HTTP request a raw upstream received. */
export interface RawRequest {
  readonly httpMethod: string;
  readonly headers: IncomingHttpHeaders;
  /** The body parsed as JSON (undefined when empty or not JSON). */
  readonly body: unknown;
}

/** What a route gets: the request, its parsed body, and the response to write. */
export interface RawExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly body: unknown;
}

/** A hand-written HTTP upstream for wire cases the SDK servers cannot produce. */
export interface RawUpstream {
  readonly url: string;
  readonly requests: RawRequest[];
  close(): Promise<void>;
}

/** Starts a node:http server on 127.0.0.1:0 whose every request goes to `route` at `/mcp`. */
export async function startRawUpstream(
  route: (exchange: RawExchange) => void | Promise<void>,
): Promise<RawUpstream> {
  const requests: RawRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      requests.push({ httpMethod: req.method ?? 'GET', headers: req.headers, body });
      await route({ req, res, body });
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** A JSON-RPC message's method and id, when the body is one. */
export function messageOf(body: unknown): {
  method?: string;
  id?: string | number | null;
  params?: Record<string, unknown>;
} {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as { method?: string; id?: string | number | null })
    : {};
}

/**
 * A raw 2024-11-05 HTTP+SSE server on {@link startRawUpstream}: a GET opens the event stream (its
 * endpoint event names /messages), each POST is acknowledged 202, and each request in it (a
 * message with an id, once the stream is open) goes to `answer` with the stream to answer on.
 * Closing it ends the stream first.
 */
export async function startRawLegacyUpstream(
  answer: (message: ReturnType<typeof messageOf>, stream: ServerResponse) => void | Promise<void>,
): Promise<RawUpstream> {
  let stream: ServerResponse | undefined;
  const upstream = await startRawUpstream(async ({ req, res, body }) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('event: endpoint\ndata: /messages\n\n');
      stream = res;
      return;
    }
    res.writeHead(202).end();
    const message = messageOf(body);
    if (message.id === undefined || stream === undefined) return;
    await answer(message, stream);
  });
  return {
    ...upstream,
    close: async () => {
      stream?.end();
      await upstream.close();
    },
  };
}

/** Answers with a JSON body given as text (so it can hold what JSON.stringify never writes). */
export function answerJsonText(
  res: ServerResponse,
  text: string,
  status = 200,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Answers with one JSON value. */
export function answerJson(
  res: ServerResponse,
  value: unknown,
  status = 200,
  headers: Record<string, string> = {},
): void {
  answerJsonText(res, JSON.stringify(value), status, headers);
}

/** The minimal 2025-06-18 handshake: initialize gets a tools-only result, notifications get 202. True when handled. */
export function answerHandshake(exchange: RawExchange): boolean {
  const message = messageOf(exchange.body);
  if (message.method === 'initialize') {
    answerJson(exchange.res, {
      jsonrpc: '2.0',
      id: message.id ?? null,
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'raw-upstream', version: '1.0.0' },
      },
    });
    return true;
  }
  if (message.method?.startsWith('notifications/') === true) {
    exchange.res.writeHead(202).end();
    return true;
  }
  if (exchange.req.method === 'GET' || exchange.req.method === 'DELETE') {
    exchange.res.writeHead(405, { allow: 'POST' }).end();
    return true;
  }
  return false;
}
