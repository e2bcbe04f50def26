import { randomUUID } from 'node:crypto';
import { DeliveryQueue } from './deliveryQueue.js';
import type { GatewayLogger } from './logger.js';
import { signWebhookBody, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './signWebhook.js';
import { isCallEvent, webhookPriority, type WebhookEvent } from './webhookEvent.js';

/**
 * What happened to one event at one webhook (counted in metrics). `carried`: a call event the full
 * queue shed, whose count went into its aggregation window instead of being lost.
 */
export type WebhookOutcome = 'delivered' | 'failed' | 'retried' | 'dropped' | 'carried';

/** Options of {@link WebhookSink}. */
export interface WebhookSinkOptions {
  /** Label in logs and metrics; never the URL, whose path is often a secret. */
  readonly name: string;
  readonly url: string;
  readonly secret: string;
  readonly logger: GatewayLogger;
  /** Attempts per event, the first included. @default 5 */
  readonly maxAttempts?: number;
  /** Per attempt. @default 5000 */
  readonly timeoutMs?: number;
  /**
   * Events waiting beyond the one being delivered. When full, a catalog event evicts the newest
   * call event; a call event is shed. @default 1000
   */
  readonly queueSize?: number;
  /** First retry delay; doubles per attempt (with jitter). @default 500 */
  readonly baseDelayMs?: number;
  /** @default 30000 */
  readonly maxDelayMs?: number;
  readonly onOutcome?: (outcome: WebhookOutcome) => void;
  /**
   * Called with each event the queue sheds (refused when full, or evicted by a catalog event);
   * returns true when the caller carries it on (its count goes into an aggregate), false when it is lost.
   */
  readonly onShed?: (event: WebhookEvent) => boolean;
}

interface Delivery {
  readonly id: string;
  readonly source: WebhookEvent;
  readonly event: string;
  readonly body: string;
  readonly timestamp: string;
}

type AttemptResult = {
  readonly retry: boolean;
  readonly ok: boolean;
  readonly status?: number;
  readonly error?: string;
};

/**
 * Delivers alert events to one webhook: a bounded queue with two priorities drained by one worker
 * (catalog events first, then call events, each in order), each POST signed with HMAC-SHA256,
 * retried with exponential backoff on network errors, timeouts, 429 and 5xx. `enqueue` never
 * waits, so a slow receiver can never hold back MCP traffic: when the queue is full a catalog
 * event evicts the newest call event, and a call event is shed (carried into its aggregate by
 * `onShed`, or dropped); whatever is lost is counted and logged.
 */
export class WebhookSink {
  readonly name: string;
  readonly #options: WebhookSinkOptions;
  readonly #queue: DeliveryQueue<Delivery>;
  readonly #abort = new AbortController();
  readonly #idle: (() => void)[] = [];
  #busy = false;
  #closed = false;

  constructor(options: WebhookSinkOptions) {
    this.name = options.name;
    this.#options = options;
    this.#queue = new DeliveryQueue(options.queueSize ?? 1000);
  }

  /** Events waiting, plus the one being delivered. */
  get depth(): number {
    return this.#queue.length + (this.#busy ? 1 : 0);
  }

  /** Queues an event; false when it was shed (queue full of events as important, or the sink is closed). */
  enqueue(event: WebhookEvent, now = new Date()): boolean {
    if (this.#closed) {
      this.#shed(event, 'closed');
      return false;
    }
    const id = randomUUID();
    const body = JSON.stringify({ ...event, time: now.toISOString(), delivery: id });
    const delivery: Delivery = {
      id,
      source: event,
      event: event.event,
      body,
      timestamp: String(Math.floor(now.getTime() / 1000)),
    };
    const { queued, evicted } = this.#queue.push(delivery, webhookPriority(event));
    if (evicted !== undefined) this.#shed(evicted.source, 'evicted');
    if (!queued) {
      this.#shed(event, 'full');
      return false;
    }
    if (!this.#busy) void this.#drain();
    return true;
  }

  #shed(event: WebhookEvent, why: 'full' | 'evicted' | 'closed'): void {
    if (this.#options.onShed?.(event) === true) {
      this.#options.onOutcome?.('carried');
      this.#options.logger.debug(
        { event: 'webhook.carried', webhook: this.name, alert: event.event, server: event.server, why },
        'webhook queue full: the call event is counted in its next aggregate',
      );
      return;
    }
    this.#options.onOutcome?.('dropped');
    this.#options.logger.warn(
      {
        event: 'webhook.dropped',
        webhook: this.name,
        alert: event.event,
        server: event.server,
        ...(isCallEvent(event) ? { count: event.count } : {}),
        why,
        queued: this.#queue.length,
        closed: this.#closed,
      },
      why === 'closed' ? 'webhook closed: alert event dropped' : 'webhook queue full: alert event dropped',
    );
  }

  /** Resolves once every queued event was delivered or given up on. */
  whenIdle(): Promise<void> {
    if (!this.#busy && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops taking events, lets the queue drain for up to `graceMs`, then aborts; resolves with the number abandoned. */
  async close(graceMs = 0): Promise<number> {
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.whenIdle(),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
    const abandoned = this.depth;
    this.#abort.abort();
    this.#queue.clear();
    if (abandoned > 0)
      this.#options.logger.warn(
        { event: 'webhook.abandoned', webhook: this.name, count: abandoned },
        'webhook events abandoned at shutdown',
      );
    await this.whenIdle();
    return abandoned;
  }

  async #drain(): Promise<void> {
    this.#busy = true;
    try {
      for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
        await this.#deliver(next);
        if (this.#abort.signal.aborted) break;
      }
    } finally {
      this.#busy = false;
      for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  async #deliver(delivery: Delivery): Promise<void> {
    const maxAttempts = this.#options.maxAttempts ?? 5;
    for (let attempt = 1; ; attempt += 1) {
      const result = await this.#attempt(delivery);
      if (this.#abort.signal.aborted) return;
      if (result.ok) {
        this.#options.onOutcome?.('delivered');
        return;
      }
      const detail = {
        webhook: this.name,
        alert: delivery.event,
        delivery: delivery.id,
        attempt,
        status: result.status,
        error: result.error,
      };
      if (!result.retry || attempt >= maxAttempts) {
        this.#options.onOutcome?.('failed');
        this.#options.logger.warn({ event: 'webhook.failed', ...detail }, 'webhook delivery failed');
        return;
      }
      this.#options.onOutcome?.('retried');
      this.#options.logger.debug({ event: 'webhook.retry', ...detail }, 'webhook delivery will be retried');
      await this.#sleep(this.#backoff(attempt));
    }
  }

  #backoff(attempt: number): number {
    const base = this.#options.baseDelayMs ?? 500;
    const ceiling = Math.min(this.#options.maxDelayMs ?? 30_000, base * 2 ** (attempt - 1));
    // Half fixed, half random: replicas retrying the same outage do not hit the receiver in step.
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  async #attempt(delivery: Delivery): Promise<AttemptResult> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    this.#abort.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(), this.#options.timeoutMs ?? 5000);
    try {
      const response = await fetch(this.#options.url, {
        method: 'POST',
        // A redirect would resend the signed alert somewhere the configuration never named.
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'toolpin-gateway',
          'x-toolpin-event': delivery.event,
          'x-toolpin-delivery': delivery.id,
          [WEBHOOK_TIMESTAMP_HEADER]: delivery.timestamp,
          [WEBHOOK_SIGNATURE_HEADER]: signWebhookBody(delivery.body, this.#options.secret),
        },
        body: delivery.body,
        signal: controller.signal,
      });
      await response.arrayBuffer().catch(() => undefined);
      const status = response.status;
      if (status >= 200 && status < 300) return { ok: true, retry: false, status };
      return { ok: false, retry: status >= 500 || status === 429 || status === 408, status };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      const reason = this.#abort.signal.aborted
        ? 'aborted'
        : controller.signal.aborted
          ? 'timeout'
          : (cause ?? (error as Error).name);
      return { ok: false, retry: true, error: reason };
    } finally {
      clearTimeout(timer);
      this.#abort.signal.removeEventListener('abort', onAbort);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#abort.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#abort.signal.addEventListener('abort', done, { once: true });
    });
  }
}
