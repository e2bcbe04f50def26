import http, { type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { GatewayLogger } from '../observe/logger.js';
import type { OpenStreams } from '../observe/openStreams.js';

/** What {@link DrainableServer.drain} needs. */
export interface DrainOptions {
  /** How long in-flight requests may take to finish before their connections are closed. */
  readonly graceMs: number;
  /** The SSE streams being relayed: listening streams are ended at once, the rest when the grace ends. */
  readonly streams: OpenStreams;
  readonly logger: GatewayLogger;
}

/** How a drain ended. */
export interface DrainResult {
  /** True when every in-flight request finished within the grace period. */
  readonly drained: boolean;
  /** Requests still open when the grace period ended (their connections were closed). */
  readonly forced: number;
}

/** An HTTP server that can stop gracefully: refuse new work, finish what is in flight, end streams. */
export interface DrainableServer {
  readonly server: Server;
  /** Base URL, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  /** Requests in flight right now. */
  readonly inflight: number;
  /** Stops accepting, ends listening streams, waits for in-flight requests up to the grace period, then closes every connection. */
  drain(options: DrainOptions): Promise<DrainResult>;
}

/** The base URL of a server listening on host:port (an IPv6 host in brackets). */
export function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** A request on a kept-alive connection after shutdown began: another replica should take it. */
function refuseWhileDraining(res: ServerResponse): void {
  const body = JSON.stringify({
    error: 'shutting_down',
    message: 'toolpin is shutting down; retry on another replica',
  });
  res.writeHead(503, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
    'retry-after': '1',
  });
  res.end(body);
}

/** How many responses of one connection are still counted in flight, and whether it closed. */
interface ConnectionCount {
  open: number;
  closed: boolean;
}

// Where a connection keeps its count: a field on the socket, not a map of sockets (see Inflight).
const COUNT = Symbol('toolpin.inflight');
type CountedSocket = Socket & { [COUNT]?: ConnectionCount };

/**
 * How many responses are in flight, and who waits for there to be none. A count, not a Set of the
 * responses: a long-lived Set churned at request rate kept every request's objects alive into the
 * old generation (state/liveList.ts says how). A response leaves the count when it closes, or when
 * its connection does: node never closes the responses of pipelined requests queued behind
 * another when the client goes away, and they would stay counted for ever.
 */
class Inflight {
  #open = 0;
  readonly #idle: (() => void)[] = [];

  get size(): number {
    return this.#open;
  }

  /** Counts the responses of `socket` (a new connection) until it closes. */
  watch(socket: Socket): void {
    const count: ConnectionCount = { open: 0, closed: false };
    (socket as CountedSocket)[COUNT] = count;
    socket.once('close', () => {
      count.closed = true;
      this.#release(count.open);
      count.open = 0;
    });
  }

  /** Counts `res` in flight until it or its connection (watched) closes. */
  track(socket: Socket, res: ServerResponse): void {
    const count = (socket as CountedSocket)[COUNT];
    // A request read before its connection closed, answered on a connection that is gone.
    if (count?.closed === true) return;
    if (count !== undefined) count.open += 1;
    this.#open += 1;
    res.once('close', () => {
      if (count?.closed === true) return;
      if (count !== undefined) count.open -= 1;
      this.#release(1);
    });
  }

  #release(closed: number): void {
    this.#open -= closed;
    if (closed > 0 && this.#open === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** True once nothing is in flight, false when `graceMs` passed first. */
  whenIdle(graceMs: number): Promise<boolean> {
    if (this.#open === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), graceMs);
      this.#idle.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

/** Stops accepting, ends listening streams, waits for `inflight` up to the grace, then closes every connection. */
async function drainServer(server: Server, inflight: Inflight, options: DrainOptions): Promise<DrainResult> {
  const { graceMs, streams, logger } = options;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A listening stream has nothing in flight: it ends now, cleanly, and the client reconnects elsewhere.
  const ended = streams.end('listen');
  logger.info(
    { event: 'gateway.draining', inflight: inflight.size, streamsEnded: ended, graceMs },
    'draining: no new connections',
  );
  const drained = await inflight.whenIdle(graceMs);
  const forced = inflight.size;
  if (!drained) {
    streams.end();
    logger.warn(
      { event: 'gateway.drain_timeout', forced, graceMs },
      'grace period over: closing the requests still in flight',
    );
  }
  server.closeAllConnections();
  await closed;
  return { drained, forced };
}

/** Listens on host:port (0 = a free port) with in-flight tracking, for graceful shutdown. */
export async function listenDrainable(
  handler: RequestListener,
  host: string,
  port: number,
): Promise<DrainableServer> {
  const inflight = new Inflight();
  let draining = false;
  const server = http.createServer((req, res) => {
    if (draining) return refuseWhileDraining(res);
    inflight.track(req.socket, res);
    handler(req, res);
  });
  server.on('connection', (socket: Socket) => inflight.watch(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    url: formatUrl(host, (server.address() as AddressInfo).port),
    get inflight() {
      return inflight.size;
    },
    drain(options) {
      draining = true;
      return drainServer(server, inflight, options);
    },
  };
}
