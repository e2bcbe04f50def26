import type { AlertsConfig, WebhookConfig } from '../config/index.js';
import type { AlertEvent } from './alerts.js';
import type { GatewayLogger } from './logger.js';
import { WebhookSink, type WebhookOutcome } from './webhookSink.js';

/** Options of {@link AlertWebhooks}. */
export interface AlertWebhooksOptions {
  /** The gateway file's `alerts` block: webhooks for every server. */
  readonly gateway: AlertsConfig | undefined;
  /** A server's own `alerts` block from its pin file, as in force now. */
  readonly serverAlerts: (server: string) => AlertsConfig | undefined;
  readonly logger: GatewayLogger;
  readonly onOutcome?: (webhook: string, outcome: WebhookOutcome | 'suppressed') => void;
  /** First retry delay of every sink. @default 500 */
  readonly baseDelayMs?: number;
}

/** The label of a webhook: its `name`, or the URL's host (the path of a webhook URL is often a secret). */
export function webhookName(config: WebhookConfig): string {
  return config.name ?? new URL(config.url).host;
}

function fingerprint(event: AlertEvent): string | undefined {
  if (event.event === 'catalog.verified') return `verified ${event.catalog ?? ''}`;
  if (event.event !== 'catalog.drift') return undefined;
  return event.drift
    .map((finding) => `${finding.kind} ${finding.key} ${finding.observed ?? ''}`)
    .sort()
    .join('\n');
}

/**
 * Routes alert events to webhooks: the gateway's, plus the event's server's own, each filtered by
 * its `events`. One {@link WebhookSink} (queue and worker) per distinct webhook, kept across pin
 * reloads. A catalog event identical to the previous one of its server within `dedupeSeconds` is
 * suppressed: every session that lists a drifted server sees the same drift, and on-call needs it once.
 */
export class AlertWebhooks {
  readonly #options: AlertWebhooksOptions;
  readonly #sinks = new Map<string, WebhookSink>();
  readonly #lastCatalogEvent = new Map<string, { fingerprint: string; at: number }>();

  constructor(options: AlertWebhooksOptions) {
    this.#options = options;
  }

  /** Alert sink: queues the event at every webhook that wants it; never waits. */
  send(event: AlertEvent, now = Date.now()): void {
    // Every catalog event moves the fingerprint, wanted or not: drift, recovery, the same drift
    // again is two alerts, not one.
    const repeat = this.#isRepeat(event, now);
    const targets = this.#targets(event);
    if (targets.length === 0) return;
    if (repeat) {
      for (const target of targets) this.#options.onOutcome?.(webhookName(target), 'suppressed');
      return;
    }
    for (const target of targets) this.#sinkFor(target).enqueue(event, new Date(now));
  }

  /** Events waiting per webhook. */
  queues(): Map<string, number> {
    const depths = new Map<string, number>();
    for (const sink of this.#sinks.values()) depths.set(sink.name, (depths.get(sink.name) ?? 0) + sink.depth);
    return depths;
  }

  /** Resolves once every sink is idle (tests, shutdown). */
  async whenIdle(): Promise<void> {
    await Promise.all([...this.#sinks.values()].map((sink) => sink.whenIdle()));
  }

  /** Drains every sink for up to `graceMs`, then abandons what is left; resolves with the number abandoned. */
  async close(graceMs = 0): Promise<number> {
    const abandoned = await Promise.all([...this.#sinks.values()].map((sink) => sink.close(graceMs)));
    return abandoned.reduce((sum, count) => sum + count, 0);
  }

  #targets(event: AlertEvent): WebhookConfig[] {
    const all = [
      ...(this.#options.gateway?.webhooks ?? []),
      ...(this.#options.serverAlerts(event.server)?.webhooks ?? []),
    ];
    const seen = new Set<string>();
    return all.filter((webhook) => {
      const key = `${webhook.url}\n${webhook.secret}`;
      if (seen.has(key) || !webhook.events.includes(event.event)) return false;
      seen.add(key);
      return true;
    });
  }

  #isRepeat(event: AlertEvent, now: number): boolean {
    const print = fingerprint(event);
    if (print === undefined) return false;
    const windowMs = (this.#options.gateway?.dedupeSeconds ?? 300) * 1000;
    const last = this.#lastCatalogEvent.get(event.server);
    if (last !== undefined && last.fingerprint === print && now - last.at < windowMs) return true;
    this.#lastCatalogEvent.set(event.server, { fingerprint: print, at: now });
    return false;
  }

  #sinkFor(config: WebhookConfig): WebhookSink {
    const name = webhookName(config);
    const key = `${name}\n${config.url}\n${config.secret}\n${config.maxAttempts}\n${config.timeoutMs}\n${config.queueSize}`;
    let sink = this.#sinks.get(key);
    if (sink === undefined) {
      sink = new WebhookSink({
        name,
        url: config.url,
        secret: config.secret,
        logger: this.#options.logger,
        maxAttempts: config.maxAttempts,
        timeoutMs: config.timeoutMs,
        queueSize: config.queueSize,
        ...(this.#options.baseDelayMs === undefined ? {} : { baseDelayMs: this.#options.baseDelayMs }),
        onOutcome: (outcome) => this.#options.onOutcome?.(name, outcome),
      });
      this.#sinks.set(key, sink);
    }
    return sink;
  }
}
