import http, { type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { GatewayLogger } from '../observe/logger.js';
import type { OpenStreams } from '../observe/openStreams.js';
import { LiveList, type ListMember } from '../state/liveList.js';

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

/** One response in flight, linked into its connection's list. */
interface Tracked extends ListMember<Tracked> {
  readonly res: ServerResponse;
}

// Where a connection keeps its responses: a field on the socket, not a map of sockets (see Inflight).
const RESPONSES = Symbol('toolpin.responses');
type TrackedSocket = Socket & { [RESPONSES]?: LiveList<Tracked> };

/**
 * How many responses are in flight, and who waits for there to be none. A count, not a Set of the
 * responses: a long-lived Set churned at request rate kept every request's objects alive into the
 * old generation (state/liveList.ts says how).
 *
 * When a client goes away node closes the response it is writing, never those of pipelined
 * requests queued behind it: they would stay in flight for ever, and so would all that waits for
 * their client to leave (an upstream request or stream, a deadline, an open-stream entry). Each
 * connection lists its responses, and closes its queued ones when it closes, as node closes the
 * one it was writing (destroyed, then 'close').
 */
class Inflight {
  #open = 0;
  readonly #idle: (() => void)[] = [];

  get size(): number {
    return this.#open;
  }

  /** Lists the responses of `socket` (a new connection); closes those still queued when it closes. */
  watch(socket: Socket): void {
    const responses = new LiveList<Tracked>();
    (socket as TrackedSocket)[RESPONSES] = responses;
    socket.once('close', () => {
      // Queued: never given the socket, and not a finished response node is about to close itself.
      const queued = responses.filter(({ res }) => res.socket === null && !res.writableFinished);
      for (const { res } of queued) {
        res.destroy();
        res.emit('close');
      }
    });
  }

  /** Counts `res` in flight until it closes. */
  track(socket: Socket, res: ServerResponse): void {
    const responses = (socket as TrackedSocket)[RESPONSES];
    const tracked: Tracked = { listPrev: null, listNext: null, listed: false, res };
    responses?.add(tracked);
    this.#open += 1;
    res.once('close', () => {
      responses?.remove(tracked);
      this.#open -= 1;
      if (this.#open === 0) for (const resolve of this.#idle.splice(0)) resolve();
    });
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
