import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { BridgeEnd } from '../transports/messageBridge.js';
import { sessionKeyOf } from './sessionKey.js';

/** Options of {@link BridgeSessions}. */
export interface BridgeSessionsOptions {
  /** Live sessions allowed at once (each may be a child process). */
  readonly max: number;
  /** A session with no request and no open stream for this long is closed. */
  readonly idleMs: number;
}

/** What ends a bridged session: a MessageBridge, or a stateless session's shared upstream. */
export interface EndableSession {
  onclose?: ((endedBy: BridgeEnd) => void) | undefined;
  close(): Promise<void>;
}

/** Room claimed for one session while its upstream starts. */
export interface SessionSlot<Front> {
  /** Registers the started session; false (and the session closed) when the front closed meanwhile. */
  fill(id: string, session: BridgedSession<Front>): boolean;
  /** Gives the room back: the session could not be opened. */
  release(): void;
}

/** The front's side of a bridged session. */
export interface BridgedSession<Front> {
  readonly bridge: EndableSession;
  readonly front: Front;
  /** Hash of the credential that opened the session; later requests must carry the same. */
  readonly credential: string;
}

interface Entry<Front> extends BridgedSession<Front> {
  open: number;
  timer: NodeJS.Timeout | undefined;
}

/** The credential a request carries, hashed (Authorization and Cookie, as sessionKeyOf does). */
export function credentialOf(headers: IncomingHttpHeaders): string {
  return sessionKeyOf({ authorization: headers.authorization, cookie: headers.cookie });
}

/**
 * The bridged sessions of one front: found by id and credential, bounded in number, closed when
 * idle (a client that vanished without ending its session must not keep a child alive forever),
 * and all closed on shutdown.
 */
export class BridgeSessions<Front> {
  readonly #options: BridgeSessionsOptions;
  readonly #entries = new Map<string, Entry<Front>>();
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

  /**
   * Claims room for a session about to be opened, or undefined when the bound is reached (sessions
   * being opened count too, so concurrent openings cannot exceed it) or the front is closed.
   */
  reserve(): SessionSlot<Front> | undefined {
    if (this.#closed || this.#entries.size + this.#reserved >= this.#options.max) return undefined;
    this.#reserved += 1;
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      this.#reserved -= 1;
      return true;
    };
    return {
      fill: (id, session) => settle() && this.#add(id, session),
      release: () => void settle(),
    };
  }

  /** Registers a started session (forgotten when its bridge closes); closes it if the front was closed meanwhile. */
  #add(id: string, session: BridgedSession<Front>): boolean {
    if (this.#closed) {
      void session.bridge.close();
      return false;
    }
    const entry: Entry<Front> = { ...session, open: 0, timer: undefined };
    this.#entries.set(id, entry);
    const previous = session.bridge.onclose;
    session.bridge.onclose = (by) => {
      clearTimeout(entry.timer);
      this.#entries.delete(id);
      previous?.(by);
    };
    this.#arm(entry);
    return true;
  }

  /** The session with this id, if the request carries the credential that opened it. */
  get(id: string, headers: IncomingHttpHeaders): BridgedSession<Front> | undefined {
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

  #arm(entry: Entry<Front>): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => void entry.bridge.close(), this.#options.idleMs);
    entry.timer.unref();
  }

  /** Closes every session, and every one still being opened once it is (shutdown, server removed or re-pointed). */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#entries.values()];
    await Promise.all(entries.map((entry) => entry.bridge.close()));
  }
}
