import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/** What one check reads from the process. */
export interface ProcessSample {
  /** Event-loop busy time since the process started, in ms (`performance.eventLoopUtilization().active`). */
  readonly activeMs: number;
  /** The heap V8 holds from the system, in bytes (`v8.getHeapStatistics().total_heap_size`). */
  readonly heapBytes: number;
}

/** One release, as logged (`process.heap_released`). */
export interface HeapRelease {
  /** V8's committed heap before the first collection, in bytes. */
  readonly heapBefore: number;
  /** V8's committed heap after the last one, in bytes. */
  readonly heapAfter: number;
  /** Full collections run (1 to `maxCollections`). */
  readonly collections: number;
  /** Time the collections held the event loop, in total, in ms. */
  readonly pauseMs: number;
}

/** Options of {@link IdleHeapRelease}; every field has a default. */
export interface IdleHeapReleaseOptions {
  /** How often the process is looked at. @default 2000 */
  readonly checkMs?: number;
  /** Checks in a row with the event loop quiet before the heap is collected. @default 3 */
  readonly quietChecks?: number;
  /** Event-loop busy time within one check above which the gateway is not idle, in ms. @default 40 */
  readonly busyMs?: number;
  /** How far V8's heap must have grown over its settled size to be worth a collection, in bytes. @default 16 MiB */
  readonly growthBytes?: number;
  /**
   * Time from the start of one release to the start of the next at least, in ms: a gateway whose
   * traffic comes in bursts a few seconds apart pays for a release once a minute at most (each is
   * 2-3 full collections, some 100-300 ms of CPU at 10,000 sessions). @default 60000
   */
  readonly minIntervalMs?: number;
  /** Full collections per release at most (at least 2; V8's own memory reducer also stops at 3). @default 3 */
  readonly maxCollections?: number;
  /** Reads the process (tests give their own). @default event-loop utilization and V8's heap statistics */
  readonly sample?: () => ProcessSample;
  /** Runs one full collection (tests give their own). @default {@link fullCollection} */
  readonly collect?: () => void;
  /** Told of each release once it is over. */
  readonly onRelease?: (release: HeapRelease) => void;
}

// A collection after the second runs only if the one before it returned a tenth of the heap.
const WORTH_ANOTHER = 0.9;
// The first full collection learns which pages hold little that is live; only the next one
// moves those objects out and gives the pages back (V8's memory reducer also always runs two).
const ALWAYS_COLLECTIONS = 2;

/** Reads the event loop's busy time and V8's committed heap. */
export function sampleProcess(): ProcessSample {
  return {
    activeMs: performance.eventLoopUtilization().active,
    heapBytes: v8.getHeapStatistics().total_heap_size,
  };
}

/**
 * A function that runs a full, synchronous garbage collection: `gc` of a context created while
 * `--expose-gc` is set for that moment only (Node.js offers no other way to ask V8 for one; the
 * process's own global gains nothing, and the flag is unset again at once).
 */
export function fullCollection(): () => void {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as () => void;
  v8.setFlagsFromString('--expose-gc');
  try {
    const gc: unknown = vm.runInNewContext('gc');
    if (typeof gc !== 'function') throw new Error('V8 exposed no gc function');
    return gc as () => void;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}

interface Release {
  readonly heapBefore: number;
  collections: number;
  pauseMs: number;
  heapAfter: number;
  /** True when the last collection returned enough that another may return more. */
  worthAnother: boolean;
}

/**
 * Gives back to the system the heap a burst of traffic grew, once the gateway has gone idle.
 *
 * V8 grows its old generation under load to a few times the live size and keeps it: its memory
 * reducer, which should collect once allocation stops, judged a gateway idle for minutes still
 * "high alloc" and never ran (docs/benchmark.md, idle sessions). So, every `checkMs`, this looks
 * at the event loop: after `quietChecks` checks in a row without work, if V8's heap has grown by
 * `growthBytes` or more over its settled size, it runs a full collection, a second one at the
 * next quiet check (the first finds the pages that hold garbage among live objects, the second
 * moves the live ones out and gives the pages back; it also shrinks the young generation, which
 * V8 does only once allocation has stopped), and more, up to `maxCollections`, while the one before
 * returned a tenth of the heap; the next release waits `minIntervalMs`. It never acts while
 * requests are served, and its check is two counters read every few seconds.
 */
export class IdleHeapRelease {
  readonly #options: Required<Omit<IdleHeapReleaseOptions, 'onRelease' | 'collect'>>;
  readonly #collect: () => void;
  readonly #onRelease: ((release: HeapRelease) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastActiveMs: number;
  #ownPauseMs = 0;
  #quiet = 0;
  /** Checks since the last release started. */
  #sinceRelease = Infinity;
  #settledBytes: number;
  #release: Release | undefined;

  constructor(options: IdleHeapReleaseOptions = {}) {
    this.#options = {
      checkMs: options.checkMs ?? 2000,
      quietChecks: options.quietChecks ?? 3,
      busyMs: options.busyMs ?? 40,
      growthBytes: options.growthBytes ?? 16 * 2 ** 20,
      maxCollections: options.maxCollections ?? 3,
      minIntervalMs: options.minIntervalMs ?? 60_000,
      sample: options.sample ?? sampleProcess,
    };
    let collect: (() => void) | undefined = options.collect;
    // Made on first use: a gateway that never grows never creates the context.
    this.#collect = () => (collect ??= fullCollection())();
    this.#onRelease = options.onRelease;
    const first = this.#options.sample();
    this.#lastActiveMs = first.activeMs;
    this.#settledBytes = first.heapBytes;
  }

  /** Starts the periodic check (its timer never keeps the process alive). */
  start(): this {
    this.#timer ??= setInterval(() => this.check(), this.#options.checkMs).unref();
    return this;
  }

  /** Stops the periodic check. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One look at the process; {@link start} calls it every `checkMs`. */
  check(): void {
    const sample = this.#options.sample();
    this.#sinceRelease++;
    // The collections this check ran last time are busy time of ours, not the gateway's.
    const busyMs = sample.activeMs - this.#lastActiveMs - this.#ownPauseMs;
    this.#lastActiveMs = sample.activeMs;
    this.#ownPauseMs = 0;
    if (busyMs > this.#options.busyMs) {
      this.#quiet = 0;
      this.#finish(undefined);
      return;
    }
    this.#quiet++;
    const release = this.#release;
    if (release !== undefined) {
      if (release.worthAnother && release.collections < this.#options.maxCollections)
        this.#collectOnce(release, sample.activeMs);
      else this.#finish(sample.heapBytes);
      return;
    }
    this.#settledBytes = Math.min(this.#settledBytes, sample.heapBytes);
    if (
      this.#quiet >= this.#options.quietChecks &&
      this.#sinceRelease * this.#options.checkMs >= this.#options.minIntervalMs &&
      sample.heapBytes >= this.#settledBytes + this.#options.growthBytes
    ) {
      this.#sinceRelease = 0;
      this.#release = {
        heapBefore: sample.heapBytes,
        collections: 0,
        pauseMs: 0,
        heapAfter: 0,
        worthAnother: true,
      };
      this.#collectOnce(this.#release, sample.activeMs);
    }
  }

  /** One full collection; its pause is read on the event loop's own clock, as the next check reads it. */
  #collectOnce(release: Release, activeMs: number): void {
    const before = release.collections === 0 ? release.heapBefore : release.heapAfter;
    this.#collect();
    const after = this.#options.sample();
    const pauseMs = after.activeMs - activeMs;
    this.#ownPauseMs += pauseMs;
    release.pauseMs += pauseMs;
    release.collections++;
    release.heapAfter = after.heapBytes;
    release.worthAnother =
      release.collections < ALWAYS_COLLECTIONS || after.heapBytes < before * WORTH_ANOTHER;
  }

  /**
   * Ends a release under way and reports it; the heap it reached is the new settled size: read
   * at this quiet check when there is one (V8 gives back the pages it swept after a collection
   * returns), as the last collection left it when traffic came back.
   */
  #finish(quietHeapBytes: number | undefined): void {
    const release = this.#release;
    if (release === undefined) return;
    this.#release = undefined;
    const heapAfter = quietHeapBytes ?? release.heapAfter;
    this.#settledBytes = heapAfter;
    this.#onRelease?.({
      heapBefore: release.heapBefore,
      heapAfter,
      collections: release.collections,
      pauseMs: Math.round(release.pauseMs),
    });
  }
}
