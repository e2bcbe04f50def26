/** Where an item stands when the queue is full: `high` evicts `low`, never the other way. */
export type DeliveryPriority = 'high' | 'low';

/** What {@link DeliveryQueue.push} did. */
export interface PushResult<T> {
  /** False when the queue was full of items of the same or a higher priority. */
  readonly queued: boolean;
  /** The low item that made room for a high one. */
  readonly evicted?: T;
}

/**
 * A bounded queue with two priorities. High items are taken first (FIFO within a priority). When
 * full, a high item evicts the newest low item; a low item is refused. So a flood of low items
 * can delay nothing high and can never push one out.
 */
export class DeliveryQueue<T> {
  readonly #capacity: number;
  readonly #high: T[] = [];
  readonly #low: T[] = [];

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Items waiting. */
  get length(): number {
    return this.#high.length + this.#low.length;
  }

  /** Adds an item; see the class comment for a full queue. */
  push(item: T, priority: DeliveryPriority): PushResult<T> {
    const lane = priority === 'high' ? this.#high : this.#low;
    if (this.length < this.#capacity) {
      lane.push(item);
      return { queued: true };
    }
    // The newest low item is the least informative one: the older ones were waiting first.
    const evicted = priority === 'high' ? this.#low.pop() : undefined;
    if (evicted === undefined) return { queued: false };
    lane.push(item);
    return { queued: true, evicted };
  }

  /** The next item: the oldest high one, else the oldest low one. */
  shift(): T | undefined {
    return this.#high.shift() ?? this.#low.shift();
  }

  /** Empties the queue; returns what it held. */
  clear(): T[] {
    return [...this.#high.splice(0), ...this.#low.splice(0)];
  }
}
