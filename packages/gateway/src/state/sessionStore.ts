import { LRUCache } from 'lru-cache';
import type { ListedSurface } from '../policy/pinSurface.js';
import { SessionCatalog } from './sessionCatalog.js';

/** Options of {@link SessionStore}. */
export interface SessionStoreOptions {
  /** @default 10000 */
  max?: number;
  /** @default 3600 */
  ttlSeconds?: number;
  /** A call decided from an observation older than this (ms) lists upstream first; 0 = every call. @default never */
  revalidateMs?: number;
}

/** The tool of a result whose id several calls to different tools share. */
export const AMBIGUOUS_CALL: unique symbol = Symbol('ambiguous call');

/**
 * A listing request awaiting its result: which page it asked for, of which surface (absent: tools);
 * or (`surface: 'instructions'`) an initialize / server/discover whose result carries instructions.
 */
export interface PendingList {
  readonly cursor: string | undefined;
  readonly surface?: ListedSurface | 'instructions';
}

/** What the session was told of the server's instructions, under which pin (see ServerCheckpoint.deliveredInstructions). */
export interface InstructionsSeen {
  readonly under: object;
  readonly observed: string | undefined;
  readonly delivered: string | undefined;
}

/** Everything the gateway remembers of one session: bounded, and rebuildable on demand. */
export class SessionState {
  /** The tools the session was served. */
  readonly catalog = new SessionCatalog();
  /** The prompts and resource templates the session was served (made when first listed). */
  readonly #catalogs = new Map<ListedSurface, SessionCatalog>();
  /** The instructions last judged for this session (the bridged 2026-07-28 fronts judge once per pin). */
  instructions: InstructionsSeen | undefined;

  /** The catalog of one listed surface (tools: {@link catalog}). */
  catalogOf(surface: ListedSurface): SessionCatalog {
    if (surface === 'tools') return this.catalog;
    let catalog = this.#catalogs.get(surface);
    if (catalog === undefined) {
      catalog = new SessionCatalog();
      this.#catalogs.set(surface, catalog);
    }
    return catalog;
  }

  /** The catalog of one listed surface if the session has one. */
  peekCatalog(surface: ListedSurface): SessionCatalog | undefined {
    return surface === 'tools' ? this.catalog : this.#catalogs.get(surface);
  }

  /** Listing requests by id key, so their results are found on any stream of the session. */
  readonly #pendingLists = new Map<string, PendingList>();
  /** tools/call requests whose result is checked against a pinned outputSchema: id key -> tool name. */
  readonly #pendingCalls = new Map<string, { tool: string | typeof AMBIGUOUS_CALL; count: number }>();

  /** Remembers a tools/list request; the oldest is forgotten past a bound (a client that never reads). */
  expectList(idKey: string, pending: PendingList): void {
    if (this.#pendingLists.size >= MAX_PENDING_LISTS) {
      const oldest = this.#pendingLists.keys().next().value;
      if (oldest !== undefined) this.#pendingLists.delete(oldest);
    }
    this.#pendingLists.set(idKey, pending);
  }

  /** Takes the pending tools/list request with this id, if any. */
  takeList(idKey: string): PendingList | undefined {
    const pending = this.#pendingLists.get(idKey);
    if (pending !== undefined) this.#pendingLists.delete(idKey);
    return pending;
  }

  /**
   * Remembers which tool a tools/call request calls, so its result is checked; bounded like
   * listings. Every call in flight under an id is counted (one result is taken per call), and two
   * calls in flight under one id to different tools (clients sharing a credential on a stateless
   * front may reuse ids) leave that id ambiguous: its results are answered as unattributable, never
   * checked against the wrong schema nor passed unchecked. `toolName` undefined: a call whose
   * result is not checked (only its id matters).
   */
  expectCall(idKey: string, toolName: string | undefined): void {
    const previous = this.#pendingCalls.get(idKey);
    if (previous !== undefined) {
      previous.count++;
      if (previous.tool !== toolName) previous.tool = AMBIGUOUS_CALL;
      return;
    }
    // A call whose result is not checked is remembered only when it shares an id (above).
    if (toolName === undefined) return;
    if (this.#pendingCalls.size >= MAX_PENDING_CALLS) {
      const oldest = this.#pendingCalls.keys().next().value;
      if (oldest !== undefined) this.#pendingCalls.delete(oldest);
    }
    this.#pendingCalls.set(idKey, { tool: toolName, count: 1 });
  }

  /** The pending listing request with this id, left pending. */
  pendingList(idKey: string): PendingList | undefined {
    return this.#pendingLists.get(idKey);
  }

  /** True while a tools/list with this id awaits its result. */
  awaitsList(idKey: string): boolean {
    return this.#pendingLists.has(idKey);
  }

  /** True while a tools/call with this id awaits its result check. */
  awaitsCall(idKey: string): boolean {
    return this.#pendingCalls.has(idKey);
  }

  /**
   * Takes one pending tools/call with this id: its tool name, AMBIGUOUS_CALL when calls to
   * different tools share the id, undefined when none is pending. The gateway takes it too when
   * it answers a call itself (a failure, a timeout), so no later call inherits it.
   */
  takeCall(idKey: string): string | typeof AMBIGUOUS_CALL | undefined {
    if (this.#pendingCalls.size === 0) return undefined;
    const entry = this.#pendingCalls.get(idKey);
    if (entry === undefined) return undefined;
    if (--entry.count <= 0) this.#pendingCalls.delete(idKey);
    return entry.tool;
  }
}

const MAX_PENDING_LISTS = 256;
const MAX_PENDING_CALLS = 1024;
// Not a tool name: names are at least one character.

/**
 * Session state keyed by server and session (or server and credential in 2026-07-28). An LRU
 * with a TTL keeps memory flat under many sessions; an evicted entry only costs a refetch.
 */
export class SessionStore {
  readonly #sessions: LRUCache<string, SessionState>;
  readonly #revalidateMs: number | undefined;

  constructor(options: SessionStoreOptions = {}) {
    this.#sessions = new LRUCache<string, SessionState>({
      max: options.max ?? 10_000,
      ttl: (options.ttlSeconds ?? 3600) * 1000,
      updateAgeOnGet: true,
    });
    this.#revalidateMs = options.revalidateMs;
  }

  /** The state of a session, created on first use. */
  get(key: string): SessionState {
    let state = this.#sessions.get(key);
    if (state === undefined) {
      state = new SessionState();
      this.#sessions.set(key, state);
    }
    return state;
  }

  /** The state of a session if the gateway holds one. */
  peek(key: string): SessionState | undefined {
    return this.#sessions.get(key);
  }

  /** Forgets a session (DELETE, or the upstream said 404). */
  delete(key: string): void {
    this.#sessions.delete(key);
  }

  /**
   * True when a catalog is too old to decide a call from. Replicas without sticky sessions set a
   * revalidation age: another replica may have relayed this session's list_changed.
   */
  needsRevalidation(catalog: SessionCatalog, now = Date.now()): boolean {
    return this.#revalidateMs !== undefined && now - catalog.completedAt >= this.#revalidateMs;
  }

  /** How many sessions are tracked. */
  get size(): number {
    return this.#sessions.size;
  }
}
