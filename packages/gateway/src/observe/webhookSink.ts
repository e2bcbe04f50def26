import { randomUUID } from 'node:crypto';
import type { AlertEvent } from './alerts.js';
import type { GatewayLogger } from './logger.js';
import { signWebhookBody, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER } from './signWebhook.js';

/** What happened to one event at one webhook (counted in metrics). */
export type WebhookOutcome = 'delivered' | 'failed' | 'retried' | 'dropped';

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
  /** Events waiting beyond the one being delivered; more are dropped. @default 1000 */
  readonly queueSize?: number;
  /** First retry delay; doubles per attempt (with jitter). @default 500 */
  readonly baseDelayMs?: number;
  /** @default 30000 */
  readonly maxDelayMs?: number;
  readonly onOutcome?: (outcome: WebhookOutcome) => void;
}

interface Delivery {
  readonly id: string;
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
 * Delivers alert events to one webhook: a bounded queue drained by one worker (events arrive in
 * order), each POST signed with HMAC-SHA256, retried with exponential backoff on network errors,
 * timeouts, 429 and 5xx. `enqueue` never waits: when the queue is full the event is dropped,
 * counted and logged, so a slow receiver can never hold back MCP traffic.
 */
export class WebhookSink {
  readonly name: string;
  readonly #options: WebhookSinkOptions;
  readonly #queue: Delivery[] = [];
  readonly #abort = new AbortController();
  readonly #idle: (() => void)[] = [];
  #busy = false;
  #closed = false;

  constructor(options: WebhookSinkOptions) {
    this.name = options.name;
    this.#options = options;
  }

  /** Events waiting, plus the one being delivered. */
  get depth(): number {
    return this.#queue.length + (this.#busy ? 1 : 0);
  }

  /** Queues an event; false when it was dropped (queue full, or the sink is closed). */
  enqueue(event: AlertEvent, now = new Date()): boolean {
    if (this.#closed || this.#queue.length >= (this.#options.queueSize ?? 1000)) {
      this.#options.onOutcome?.('dropped');
      this.#options.logger.warn(
        {
          event: 'webhook.dropped',
          webhook: this.name,
          alert: event.event,
          server: event.server,
          queued: this.#queue.length,
          closed: this.#closed,
        },
        'webhook queue full: alert event dropped',
      );
      return false;
    }
    const id = randomUUID();
    const body = JSON.stringify({ ...event, time: now.toISOString(), delivery: id });
    this.#queue.push({ id, event: event.event, body, timestamp: String(Math.floor(now.getTime() / 1000)) });
    if (!this.#busy) void this.#drain();
    return true;
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
    this.#queue.length = 0;
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
