import { DEFAULT_MAX_UPSTREAM_BYTES } from '../defaults.js';
import { GatewayError } from '../errors.js';
import { SURFACE_LISTINGS, type ListedSurface } from '../wire/listedSurfaces.js';

/** Bound on the bytes of one listing's answers, all pages together (the bound of one answer). */
export const MAX_LISTING_BYTES = DEFAULT_MAX_UPSTREAM_BYTES;

/** The bounds of one whole listing (every page together). */
export interface ListingLimits {
  readonly maxPages: number;
  /** Bytes of every page together. @default MAX_LISTING_BYTES */
  readonly maxBytes?: number;
  /** Time for every page together, in ms. @default none beyond each page's own */
  readonly timeoutMs?: number;
  /** What is listed (its method and items name the listing in errors). @default 'tools' */
  readonly surface?: ListedSurface;
}

/** What one page request may still use of its listing's bounds. */
export interface PageBudget {
  /** Aborted when the listing's time is up. */
  readonly signal: AbortSignal | undefined;
  /**
   * Counts bytes of the page as they are read; throws GW_CATALOG_UNAVAILABLE past the listing's
   * byte bound. A page that never calls it is counted by its result's JSON length.
   */
  count(bytes: number): void;
}

function exceeded(message: string, data: Record<string, unknown>): GatewayError {
  return new GatewayError('GW_CATALOG_UNAVAILABLE', message, data);
}

/**
 * The byte and time bounds of one listing in progress, shared by its pages: a listing of many
 * small pages, each within its own bounds, cannot add up to more than one answer's bytes or one
 * request's time. Errors carry `data.bound` (`bytes`, `time`) and the pages done.
 */
export class ListingBudget {
  readonly #maxBytes: number;
  readonly #method: string;
  #bytes = 0;
  #counted = false;
  #pages = 0;
  #timedOut: GatewayError | undefined;
  readonly #controller = new AbortController();
  readonly #expired: Promise<never> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(limits: Omit<ListingLimits, 'maxPages'>) {
    this.#maxBytes = limits.maxBytes ?? MAX_LISTING_BYTES;
    const method = SURFACE_LISTINGS[limits.surface ?? 'tools'].method;
    this.#method = method;
    const { timeoutMs } = limits;
    if (timeoutMs === undefined) return;
    this.#expired = new Promise<never>((_resolve, reject) => {
      this.#timer = setTimeout(() => {
        this.#timedOut = exceeded(`the upstream's ${method} took longer than ${timeoutMs} ms in all`, {
          bound: 'time',
          pages: this.#pages,
        });
        reject(this.#timedOut);
        this.#controller.abort(this.#timedOut);
      }, timeoutMs);
    });
    this.#expired.catch(() => undefined);
  }

  /**
   * Runs one page request within what is left: it gets the deadline's signal, is not waited for
   * past the deadline, and its bytes are counted (by its reader, else as its result's JSON length).
   */
  async page<T>(request: (budget: PageBudget) => Promise<T>): Promise<T> {
    this.#counted = false;
    const budget: PageBudget = {
      signal: this.#expired === undefined ? undefined : this.#controller.signal,
      count: (bytes) => this.#count(bytes),
    };
    try {
      const pending = request(budget);
      const result = await (this.#expired === undefined ? pending : Promise.race([pending, this.#expired]));
      if (!this.#counted) this.#count(JSON.stringify(result ?? null).length);
      this.#pages++;
      return result;
    } catch (error) {
      // A page that failed because the deadline aborted it failed on the time bound.
      throw this.#timedOut ?? error;
    }
  }

  /** Ends the deadline's timer: the listing is over. */
  stop(): void {
    clearTimeout(this.#timer);
  }

  #count(bytes: number): void {
    this.#counted = true;
    this.#bytes += bytes;
    if (this.#bytes > this.#maxBytes)
      throw exceeded(`the upstream's ${this.#method} pages exceed ${this.#maxBytes} bytes in all`, {
        bound: 'bytes',
        pages: this.#pages + 1,
      });
  }
}
