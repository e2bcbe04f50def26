import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { BridgeEnd } from '../transports/messageBridge.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { headerValue } from '../wire/httpHeaders.js';
import { jsonRpcError } from '../wire/jsonRpc.js';
import { replyJson } from './clientReply.js';
import { principalOf, scopePrincipalOf } from './requestPrincipal.js';
import { sessionKeyOf } from './sessionKey.js';

/** Options of {@link BridgeSessions}. */
export interface BridgeSessionsOptions {
  /** Live sessions allowed at once (each may be a child process). */
  readonly max: number;
  /** A session with no request and no open stream for this long is closed. */
  readonly idleMs: number;
  /** Sessions one client may hold at once, shared by the fronts of a server. @default no bound */
  readonly quota?: ClientQuota;
  /**
   * Sessions one remote address may hold at once, whatever credentials its requests carry, shared
   * by the fronts of a server. @default no bound
   */
  readonly addressQuota?: ClientQuota;
}

/**
 * Why no session could be opened: the server's bound, the client's quota, its address's quota, or
 * the front closing.
 */
export type SessionRefusalReason = 'too_many_sessions' | 'client_quota' | 'address_quota' | 'closing';

/** What {@link BridgeSessions.reserve} answers when it has no room. */
export interface SessionRefusal {
  readonly refused: SessionRefusalReason;
}

/**
 * How many bridged sessions each client (or each remote address) holds, across the fronts of one
 * server: a client that opens sessions without using them (each one a child process) exhausts its
 * own quota, not the server's bound for everyone else.
 */
export class ClientQuota {
  readonly #counts = new Map<string, number>();

  constructor(readonly perClient: number) {}

  /** Takes one session of the client's quota; undefined when it is used up. The function gives it back (once). */
  take(client: string): (() => void) | undefined {
    const held = this.#counts.get(client) ?? 0;
    if (held >= this.perClient) return undefined;
    this.#counts.set(client, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.#counts.get(client) ?? 1) - 1;
      if (left <= 0) this.#counts.delete(client);
      else this.#counts.set(client, left);
    };
  }

  /** How many sessions the client holds. */
  held(client: string): number {
    return this.#counts.get(client) ?? 0;
  }
}

/** What ends a bridged session: a MessageBridge, or a stateless session's shared upstream. */
export interface EndableSession {
  onclose?: ((endedBy: BridgeEnd) => void) | undefined;
  close(): Promise<void>;
}

/** True when {@link BridgeSessions.reserve} found no room. */
export function isRefusal(value: object): value is SessionRefusal {
  return 'refused' in value;
}

/** Room claimed for one session while its upstream starts. */
export interface SessionSlot<Handler> {
  /** Registers the started session; false (and the session closed) when these sessions were closed meanwhile. */
  fill(id: string, session: BridgedSession<Handler>): boolean;
  /** Gives the room back: the session could not be opened. */
  release(): void;
}

/** A bridged session as its front holds it. */
export interface BridgedSession<Handler> {
  /** What carries the session's messages (a MessageBridge, a StatelessSession), and ends it. */
  readonly carrier: EndableSession;
  /** What takes the session's requests: its SDK server transport, or the StatelessSession. */
  readonly handler: Handler;
  /** Hash of the credential that opened the session; later requests must carry the same. */
  readonly credential: string;
}

interface Entry<Handler> extends BridgedSession<Handler> {
  open: number;
  timer: NodeJS.Timeout | undefined;
  /** Gives the client's and the address's quota back. */
  release: () => void;
}

/** The credential a request carries, hashed (Authorization and Cookie, as sessionKeyOf does), and the principal it speaks for. */
export function credentialOf(headers: IncomingHttpHeaders): string {
  return sessionKeyOf(
    { authorization: headers.authorization, cookie: headers.cookie },
    principalOf(headers),
    scopePrincipalOf(headers),
  );
}

/**
 * The remote address a request comes from, for the per-address session quota. A proxy in front of
 * the gateway makes all its clients one address (the proxy's); `X-Forwarded-For` is not trusted.
 */
export function addressKeyOf(req: IncomingMessage): string {
  return `address:${req.socket.remoteAddress ?? 'unknown'}`;
}

/**
 * Who a request comes from, for the per-client session quota: its credential (hashed) when it
 * carries one, else its remote address. The gateway does not verify the credential (any string
 * makes another client), which is why the address has a quota of its own (see addressKeyOf).
 */
export function clientKeyOf(req: IncomingMessage): string {
  const { authorization, cookie } = req.headers;
  if (authorization !== undefined || cookie !== undefined) return credentialOf(req.headers);
  return addressKeyOf(req);
}

/**
 * The bridged sessions of one front: found by id and credential, bounded in number, closed when
 * idle (a client that vanished without ending its session must not keep a child alive forever),
 * and all closed on shutdown.
 */
export class BridgeSessions<Handler> {
  readonly #options: BridgeSessionsOptions;
  readonly #entries = new Map<string, Entry<Handler>>();
  /** Sessions being opened: they count against the bound before they are registered. */
  #reserved = 0;
  #closed = false;

  constructor(options: BridgeSessionsOptions) {
    this.#options = options;
  }

  /** How many sessions are live. */
  get size(): number {
    return this.#entries.size;
  }

  /** What a refusal tells a client to wait: the idle time that frees a session, at most a minute. */
  get retryAfterSeconds(): number {
    return Math.max(1, Math.min(60, Math.ceil(this.#options.idleMs / 1000)));
  }

  /**
   * Claims room for a session of `client` (see clientKeyOf) from `address` (see addressKeyOf) about
   * to be opened, or says why there is none: the server's bound is reached (sessions being opened
   * count too, so concurrent openings cannot exceed it), the client's quota or its address's quota
   * is used up, or these sessions are closed (shutdown).
   */
  reserve(client: string, address: string): SessionSlot<Handler> | SessionRefusal {
    if (this.#closed) return { refused: 'closing' };
    if (this.#entries.size + this.#reserved >= this.#options.max) return { refused: 'too_many_sessions' };
    const { quota, addressQuota } = this.#options;
    const releaseClient = quota === undefined ? () => undefined : quota.take(client);
    if (releaseClient === undefined) return { refused: 'client_quota' };
    const releaseAddress = addressQuota === undefined ? () => undefined : addressQuota.take(address);
    if (releaseAddress === undefined) {
      releaseClient();
      return { refused: 'address_quota' };
    }
    const release = (): void => {
      releaseClient();
      releaseAddress();
    };
    this.#reserved += 1;
    // The reservation ends once, by whichever of fill and release comes first; true for that one.
    let ended = false;
    const endReservation = (): boolean => {
      if (ended) return false;
      ended = true;
      this.#reserved -= 1;
      return true;
    };
    return {
      fill: (id, session) => endReservation() && this.#add(id, session, release),
      release: () => {
        if (endReservation()) release();
      },
    };
  }

  /** Registers a started session (forgotten when its bridge closes); closes it if these sessions were closed meanwhile. */
  #add(id: string, session: BridgedSession<Handler>, release: () => void): boolean {
    if (this.#closed) {
      release();
      void session.carrier.close();
      return false;
    }
    const entry: Entry<Handler> = { ...session, open: 0, timer: undefined, release };
    this.#entries.set(id, entry);
    const previous = session.carrier.onclose;
    session.carrier.onclose = (by) => {
      clearTimeout(entry.timer);
      this.#entries.delete(id);
      entry.release();
      previous?.(by);
    };
    this.#arm(entry);
    return true;
  }

  /** The session with this id, if the request carries the credential that opened it. */
  get(id: string, headers: IncomingHttpHeaders): BridgedSession<Handler> | undefined {
    const entry = this.#entries.get(id);
    return entry !== undefined && entry.credential === credentialOf(headers) ? entry : undefined;
  }

  /** Counts a response of the session as open until it closes; the idle clock runs only when none is. */
  track(id: string, res: ServerResponse): void {
    const entry = this.#entries.get(id);
    if (entry === undefined) return;
    entry.open += 1;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    res.once('close', () => {
      entry.open -= 1;
      if (entry.open === 0 && this.#entries.get(id) === entry) this.#arm(entry);
    });
  }

  #arm(entry: Entry<Handler>): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => void entry.carrier.close(), this.#options.idleMs);
    entry.timer.unref();
  }

  /** Closes every session, and every one still being opened once it is (shutdown, server removed or re-pointed). */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#entries.values()];
    await Promise.all(entries.map((entry) => entry.carrier.close()));
  }
}

/** What serves the requests of one Streamable HTTP session (the SDK's transport, or a handler wrapping one). */
interface SessionRequestHandler {
  handleRequest(req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void>;
}

/**
 * Serves a request that names a session (`Mcp-Session-Id`) on that session, or answers 404 when the
 * session is unknown or was opened with another credential. False when the request names none (the
 * front decides: an initialize, a 2026-07-28 request, or a refusal).
 */
export async function serveNamedSession(
  sessions: BridgeSessions<SessionRequestHandler>,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<boolean> {
  const id = headerValue(req.headers, 'mcp-session-id');
  if (id === undefined) return false;
  const session = sessions.get(id, req.headers);
  if (session === undefined) {
    replyJson(res, 404, jsonRpcError(null, ErrorCodes.SESSION_NOT_FOUND, 'Session not found'));
    return true;
  }
  sessions.track(id, res);
  await session.handler.handleRequest(req, res, body);
  return true;
}
