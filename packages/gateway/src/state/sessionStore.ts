import { LRUCache } from 'lru-cache';
import type { ListedSurface } from '../policy/pinSurface.js';
import type { StatedArtifactVerdict } from '../policy/statedArtifact.js';
import { AnswerBook } from './answerBook.js';
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

/** What the session was told of the server's instructions, under which pin (see ServerCheckpoint.deliveredInstructions). */
export interface InstructionsSeen {
  readonly under: object;
  readonly observed: string | undefined;
  readonly delivered: string | undefined;
}

/**
 * What an upstream the gateway opened itself stated of the server, as judged under which pin: the
 * refusal, or undefined (see ServerCheckpoint.refusesOwnUpstream).
 */
export interface StatedServerSeen {
  readonly under: object;
  readonly refused: Extract<StatedArtifactVerdict, { kind: 'drifted' }> | undefined;
}

/** Everything the gateway remembers of one session: bounded, and rebuildable on demand. */
export class SessionState {
  /** The tools the session was served. */
  readonly catalog = new SessionCatalog();
  /** The prompts and resource templates the session was served (made when first listed). */
  #catalogs: Map<ListedSurface, SessionCatalog> | undefined;
  /** The instructions last judged for this session (the bridged 2026-07-28 fronts judge once per pin). */
  instructions: InstructionsSeen | undefined;
  /** The stated identity of the gateway's own upstream connection, judged once per pin. */
  statedServer: StatedServerSeen | undefined;
  /** The uriTemplates the session's last resources/templates/list carried (while principals are configured). */
  listedTemplates: Set<string> | undefined;

  /** The catalog of one listed surface (tools: {@link catalog}). */
  catalogOf(surface: ListedSurface): SessionCatalog {
    if (surface === 'tools') return this.catalog;
    this.#catalogs ??= new Map();
    let catalog = this.#catalogs.get(surface);
    if (catalog === undefined) {
      catalog = new SessionCatalog();
      this.#catalogs.set(surface, catalog);
    }
    return catalog;
  }

  /** The catalog of one listed surface if the session has one. */
  peekCatalog(surface: ListedSurface): SessionCatalog | undefined {
    return surface === 'tools' ? this.catalog : this.#catalogs?.get(surface);
  }

  /**
   * The requests of this session awaiting their answer, on whatever stream of the session it
   * arrives (a sessionless exchange has a book of its own: see AnswerBook).
   */
  readonly answers = new AnswerBook();
}

/**
 * Session state keyed by server and session (or server and credential in 2026-07-28). An LRU
 * with a TTL keeps memory flat under many sessions; an evicted entry only costs a refetch.
 */
export class SessionStore {
  readonly #sessions: LRUCache<string, SessionState>;
  readonly #revalidateMs: number | undefined;

  constructor(options: SessionStoreOptions = {}) {
    const ttl = (options.ttlSeconds ?? 3600) * 1000;
    this.#sessions = new LRUCache<string, SessionState>({
      max: options.max ?? 10_000,
      ttl,
      updateAgeOnGet: true,
      // The clock lru-cache reads for staleness is kept this long (one timer each time it is read
      // anew): the default 1 ms made a timer nearly every request; a session's age is counted in
      // seconds.
      ttlResolution: Math.min(1000, Math.floor(ttl / 16)),
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
