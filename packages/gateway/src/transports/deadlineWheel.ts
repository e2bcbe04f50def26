/** Something that must happen by a time unless it is disarmed first: a timeout, an idle limit. */
export interface Deadline {
  /** When it fires (performance.now() milliseconds); set by {@link DeadlineWheel.arm}. */
  deadlineAt: number;
  /** Called once when the deadline passes while armed. */
  onDeadline(): void;
}

/**
 * One timer for every deadline of a server's exchanges, in place of a timer per request: arming
 * is a field write and a set insertion, re-arming (a chunk arrived) a field write. A deadline fires
 * between its time and one tick later; the tick is a small fraction of the shortest limit armed
 * (`tickMs`). The timer never holds the process open, and stops when nothing is armed.
 */
export class DeadlineWheel {
  readonly #armed = new Set<Deadline>();
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

  /** Arms (or re-arms) `deadline` to fire `ms` from now. */
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
    this.#armed.delete(deadline);
  }

  #tick(): void {
    if (this.#armed.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = this.#now();
    for (const deadline of this.#armed) {
      if (deadline.deadlineAt > now) continue;
      this.#armed.delete(deadline);
      deadline.onDeadline();
    }
  }
}
