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

  constructor(options: BridgeSessionsOptions) {
    this.#options = options;
  }

  /** How many sessions are live. */
  get size(): number {
    return this.#entries.size;
  }

  /** True when another session may be opened. */
  get hasRoom(): boolean {
    return this.#entries.size < this.#options.max;
  }

  /** Registers a started session; it is forgotten when its bridge closes. */
  add(id: string, session: BridgedSession<Front>): void {
    const entry: Entry<Front> = { ...session, open: 0, timer: undefined };
    this.#entries.set(id, entry);
    const previous = session.bridge.onclose;
    session.bridge.onclose = (by) => {
      clearTimeout(entry.timer);
      this.#entries.delete(id);
      previous?.(by);
    };
    this.#arm(entry);
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

  /** Closes every session (gateway shutdown, server removed or re-pointed). */
  async closeAll(): Promise<void> {
    const entries = [...this.#entries.values()];
    await Promise.all(entries.map((entry) => entry.bridge.close()));
  }
}
