import type { DenyData } from '../policy/decision.js';
import type { AggregatedCallEvent, CallAlertEvent, SingleCallEvent } from './webhookEvent.js';

/** Distinct server/tool/reason windows open at once; calls of further tools share one window per server and reason. */
export const MAX_CALL_WINDOWS = 256;
/** Session labels listed in one aggregated event. */
const MAX_SESSIONS = 10;

/** Options of {@link CallWindows}. */
export interface CallWindowsOptions {
  /** Length of a window. */
  readonly windowMs: number;
  /** Queues an aggregated event when a window ends (a refusal comes back through {@link CallWindows.carry}). */
  readonly deliver: (event: AggregatedCallEvent) => void;
  /** @default MAX_CALL_WINDOWS */
  readonly maxWindows?: number;
}

interface Window {
  readonly event: CallAlertEvent['event'];
  readonly server: string;
  readonly tool: string | null;
  readonly reason: DenyData['reason'];
  count: number;
  first: number;
  last: number;
  sessions: Set<string>;
  decision: DenyData;
  /** Absent once shutdown began: windows then end only by {@link CallWindows.flush}. */
  timer: NodeJS.Timeout | undefined;
}

/**
 * Aggregates call alerts for one webhook, per server, tool and reason: the first call of a window
 * goes out at once; the calls after it are counted, and when the window ends one aggregated event
 * carries their count. A window that counted calls starts another one (a sustained flood is one
 * event per window); a window that counted none closes, so the next call goes out at once again.
 * Counts are never lost: an event the queue sheds is carried back into its window.
 */
export class CallWindows {
  readonly #options: CallWindowsOptions;
  readonly #windows = new Map<string, Window>();
  /** Shutdown began: no window ends by time any more. */
  #flushing = false;
  #closed = false;

  constructor(options: CallWindowsOptions) {
    this.#options = options;
  }

  /** True when this call is the first of its window and goes out at once; false when it was counted. */
  admit(event: CallAlertEvent, now = Date.now()): boolean {
    if (this.#flushing) return true;
    const slot = this.#slotOf(event.event, event.server, event.decision.tool, event.decision.reason);
    const window = this.#windows.get(slot.key);
    if (window !== undefined) {
      count(window, 1, now, now, event.decision, [event.session]);
      return false;
    }
    this.#open(slot, event, now);
    return true;
  }

  /** Adds the count of an event the queue shed back to its window; false once closed (the count is lost, and logged). */
  carry(event: SingleCallEvent | AggregatedCallEvent, now = Date.now()): boolean {
    if (this.#closed) return false;
    const shed = 'aggregated' in event;
    const tool = shed ? event.tool : event.decision.tool;
    const reason = shed ? event.reason : event.decision.reason;
    const slot = this.#slotOf(event.event, event.server, tool, reason);
    const window = this.#windows.get(slot.key) ?? this.#open(slot, event, now);
    const first = shed ? Date.parse(event.window.first) : now;
    const last = shed ? Date.parse(event.window.last) : now;
    count(window, event.count, first, last, event.decision, shed ? event.sessions : [event.session]);
    return true;
  }

  /**
   * Shutdown, step one: ends every window now, delivering what each counted, and stops ending them
   * by time. Returns the calls still counted: those of aggregates the queue shed, carried back
   * (flush again once the queue has room).
   */
  flush(): number {
    this.#flushing = true;
    for (const key of [...this.#windows.keys()]) this.#end(key, false);
    let pending = 0;
    for (const window of this.#windows.values()) pending += window.count;
    return pending;
  }

  /** Shutdown, last step: delivers what is left and stops counting; what the queue sheds now is lost (and logged by it). */
  close(): void {
    this.#flushing = true;
    this.#closed = true;
    for (const key of [...this.#windows.keys()]) this.#end(key, false);
  }

  #slotOf(event: string, server: string, tool: string | null, reason: string): Slot {
    const key = JSON.stringify([event, server, tool, reason]);
    const limit = this.#options.maxWindows ?? MAX_CALL_WINDOWS;
    // Tool names come from clients: past the limit, further tools share one window, so a client
    // inventing names can neither grow this map nor get one event sent per name.
    if (this.#windows.has(key) || this.#windows.size < limit) return { key, tool };
    return { key: JSON.stringify([event, server, null, reason]), tool: null };
  }

  #open(
    slot: Slot,
    from: { event: Window['event']; server: string; decision: DenyData },
    now: number,
  ): Window {
    const window: Window = {
      event: from.event,
      server: from.server,
      tool: slot.tool,
      reason: from.decision.reason,
      count: 0,
      first: now,
      last: now,
      sessions: new Set(),
      decision: from.decision,
      timer: this.#schedule(slot.key),
    };
    this.#windows.set(slot.key, window);
    return window;
  }

  #schedule(key: string): NodeJS.Timeout | undefined {
    if (this.#flushing) return undefined;
    const timer = setTimeout(() => this.#end(key, true), this.#options.windowMs);
    // A window never keeps the process alive; shutdown ends them all (close).
    timer.unref();
    return timer;
  }

  #end(key: string, reopen: boolean): void {
    const window = this.#windows.get(key);
    if (window === undefined) return;
    clearTimeout(window.timer);
    if (window.count === 0 || !reopen) this.#windows.delete(key);
    if (window.count === 0) return;
    const aggregated: AggregatedCallEvent = {
      event: window.event,
      server: window.server,
      tool: window.tool,
      reason: window.reason,
      count: window.count,
      sessions: [...window.sessions],
      window: { first: new Date(window.first).toISOString(), last: new Date(window.last).toISOString() },
      decision: window.decision,
      aggregated: true,
    };
    window.count = 0;
    window.sessions = new Set();
    // A window that counted calls is followed by another: a sustained flood is one event per window.
    if (reopen) window.timer = this.#schedule(key);
    this.#options.deliver(aggregated);
  }
}

interface Slot {
  readonly key: string;
  /** Null for the shared window of tools beyond the limit. */
  readonly tool: string | null;
}

function count(
  window: Window,
  calls: number,
  first: number,
  last: number,
  decision: DenyData,
  sessions: readonly string[],
): void {
  window.first = window.count === 0 ? first : Math.min(window.first, first);
  window.last = window.count === 0 ? last : Math.max(window.last, last);
  window.count += calls;
  window.decision = decision;
  for (const session of sessions) if (window.sessions.size < MAX_SESSIONS) window.sessions.add(session);
}
