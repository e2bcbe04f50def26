import { LiveList, type ListMember } from '../state/liveList.js';

/**
 * Something that must happen by a time unless it is disarmed first: a timeout, an idle limit. Its
 * list links are the wheel's (see {@link LiveList}): a new deadline starts unlisted.
 */
export interface Deadline extends ListMember<Deadline> {
  /** When it fires (performance.now() milliseconds); set by {@link DeadlineWheel.arm}. */
  deadlineAt: number;
  /** Called once when the deadline passes while armed. */
  onDeadline(): void;
}

/** A deadline that calls `onDeadline` when it passes while armed. */
export function newDeadline(onDeadline: () => void): Deadline {
  // The links written out: spreading a shared object of them is a slow copy (twice per request).
  return { listPrev: null, listNext: null, listed: false, deadlineAt: 0, onDeadline };
}

/**
 * One timer for every deadline of a server's exchanges, in place of a timer per request: arming
 * is a field write and a link into a list, re-arming (a chunk arrived) a field write. A deadline fires
 * between its time and one tick later; the tick is a small fraction of the shortest limit armed
 * (`tickMs`). The timer never holds the process open, and stops when nothing is armed.
 */
export class DeadlineWheel {
  readonly #armed = new LiveList<Deadline>();
  readonly #tickMs: number;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;

  /**
   * `shortestMs`: the shortest limit this wheel arms; deadlines fire at most ~1/16 of it late.
   * `now`: the clock deadlines are read on (performance.now(); a test gives its own).
   */
  constructor(shortestMs: number, now: () => number = () => performance.now()) {
    this.#tickMs = Math.min(1000, Math.max(5, Math.floor(shortestMs / 16)));
    this.#now = now;
  }

  /** Arms (or re-arms) `deadline` to fire `ms` from now (a deadline belongs to one wheel). */
  arm(deadline: Deadline, ms: number): void {
    deadline.deadlineAt = this.#now() + ms;
    this.#armed.add(deadline);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), this.#tickMs);
      this.#timer.unref();
    }
  }

  /** Disarms `deadline`: it will not fire (until armed again). */
  disarm(deadline: Deadline): void {
    this.#armed.remove(deadline);
  }

  #tick(): void {
    if (this.#armed.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = this.#now();
    // Gathered first: a deadline's action may disarm others (or arm new ones).
    for (const deadline of this.#armed.filter((armed) => armed.deadlineAt <= now)) {
      if (!deadline.listed || deadline.deadlineAt > now) continue;
      this.#armed.remove(deadline);
      deadline.onDeadline();
    }
  }
}
