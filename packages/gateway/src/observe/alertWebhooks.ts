import type { AlertsConfig, WebhookConfig } from '../config/index.js';
import type { AlertEvent } from './alerts.js';
import { CallWindows } from './callWindows.js';
import type { GatewayLogger } from './logger.js';
import { isCallEvent, type CallAlertEvent, type WebhookEvent } from './webhookEvent.js';
import { WebhookSink, type WebhookOutcome } from './webhookSink.js';

/** Default length of a call-alert aggregation window (gateway file `alerts.aggregateSeconds`). */
export const DEFAULT_AGGREGATE_SECONDS = 10;
// Each round of a shutdown flush queues at least a queue's worth of aggregates, and there are at
// most MAX_CALL_WINDOWS (plus a few overflow windows) of them: a few rounds always suffice.
const MAX_FLUSH_ROUNDS = 16;

/** Options of {@link AlertWebhooks}. */
export interface AlertWebhooksOptions {
  /** The gateway file's `alerts` block: webhooks for every server. */
  readonly gateway: AlertsConfig | undefined;
  /** A server's own `alerts` block from its pin file, as in force now. */
  readonly serverAlerts: (server: string) => AlertsConfig | undefined;
  readonly logger: GatewayLogger;
  readonly onOutcome?: (webhook: string, outcome: WebhookOutcome | 'suppressed' | 'aggregated') => void;
  /** First retry delay of every sink. @default 500 */
  readonly baseDelayMs?: number;
  /** True for a drift event a reviewer acknowledged (kept blocked): it is not sent again. */
  readonly acknowledged?: (event: AlertEvent) => boolean;
}

interface Target {
  readonly sink: WebhookSink;
  readonly calls: CallWindows;
}

/** The label of a webhook: its `name`, or the URL's host (the path of a webhook URL is often a secret). */
function webhookName(config: WebhookConfig): string {
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
 * The event as a webhook limited to high severity receives it: a drift event with its high
 * findings only, none when it has none; a call refused or flagged for a low drift, none.
 */
function severityFiltered(event: AlertEvent, webhook: WebhookConfig): AlertEvent | undefined {
  if (webhook.minSeverity !== 'high') return event;
  if (event.event === 'catalog.drift') {
    const drift = event.drift.filter((finding) => finding.severity !== 'low');
    if (drift.length === 0) return undefined;
    return drift.length === event.drift.length ? event : { ...event, drift };
  }
  return isCallEvent(event) && event.decision.severity === 'low' ? undefined : event;
}

/**
 * Routes alert events to webhooks: the gateway's, plus the event's server's own, each filtered by
 * its `events` (and `minSeverity`). One {@link WebhookSink} (queue and worker) per distinct webhook, kept across pin
 * reloads. A catalog event identical to the previous one of its server within `dedupeSeconds` is
 * suppressed: every session that lists a drifted server sees the same drift, and on-call needs it once.
 * A drift event whose every finding a reviewer acknowledged ("keep blocked") is suppressed too.
 * Call events are aggregated per webhook, server, tool and reason over `aggregateSeconds`
 * ({@link CallWindows}): a client sending refused calls in bulk costs a webhook one event per window.
 */
export class AlertWebhooks {
  readonly #options: AlertWebhooksOptions;
  readonly #sinks = new Map<string, Target>();
  readonly #lastCatalogEvent = new Map<string, { fingerprint: string; at: number }>();

  constructor(options: AlertWebhooksOptions) {
    this.#options = options;
  }

  /** Alert sink: queues the event at every webhook that wants it; never waits. */
  send(event: AlertEvent, now = Date.now()): void {
    // Every catalog event moves the fingerprint, wanted or not: drift, recovery, the same drift
    // again is two alerts, not one.
    const repeat = this.#options.acknowledged?.(event) === true || this.#isRepeat(event, now);
    const targets = this.#targets(event);
    if (targets.length === 0) return;
    if (repeat) {
      for (const target of targets) this.#options.onOutcome?.(webhookName(target), 'suppressed');
      return;
    }
    for (const target of targets) {
      const wanted = severityFiltered(event, target);
      if (wanted === undefined) continue;
      const { sink, calls } = this.#sinkFor(target);
      if (isCallEvent(wanted)) {
        if (calls.admit(wanted, now)) sink.enqueue(single(wanted), new Date(now));
        else this.#options.onOutcome?.(sink.name, 'aggregated');
      } else sink.enqueue(wanted, new Date(now));
    }
  }

  /** Events waiting per webhook. */
  queues(): Map<string, number> {
    const depths = new Map<string, number>();
    for (const { sink } of this.#sinks.values())
      depths.set(sink.name, (depths.get(sink.name) ?? 0) + sink.depth);
    return depths;
  }

  /** Resolves once every sink is idle (tests, shutdown). */
  async whenIdle(): Promise<void> {
    await Promise.all([...this.#sinks.values()].map(({ sink }) => sink.whenIdle()));
  }

  /**
   * Ends every aggregation window (queuing what they counted), drains every sink for up to
   * `graceMs`, then abandons what is left; resolves with the number abandoned.
   */
  async close(graceMs = 0): Promise<number> {
    const deadline = Date.now() + graceMs;
    await Promise.all([...this.#sinks.values()].map((target) => flushWindows(target, deadline)));
    const rest = Math.max(0, deadline - Date.now());
    const abandoned = await Promise.all([...this.#sinks.values()].map(({ sink }) => sink.close(rest)));
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

  #sinkFor(config: WebhookConfig): Target {
    const name = webhookName(config);
    const key = `${name}\n${config.url}\n${config.secret}\n${config.maxAttempts}\n${config.timeoutMs}\n${config.queueSize}`;
    let target = this.#sinks.get(key);
    if (target === undefined) {
      const seconds = this.#options.gateway?.aggregateSeconds ?? DEFAULT_AGGREGATE_SECONDS;
      const calls = new CallWindows({
        windowMs: seconds * 1000,
        deliver: (event) => {
          this.#options.logger.debug(
            {
              event: 'webhook.aggregated',
              webhook: name,
              alert: event.event,
              server: event.server,
              tool: event.tool,
              reason: event.reason,
              count: event.count,
            },
            'call events of one window sent as one',
          );
          sink.enqueue(event);
        },
      });
      const sink: WebhookSink = new WebhookSink({
        name,
        url: config.url,
        secret: config.secret,
        logger: this.#options.logger,
        maxAttempts: config.maxAttempts,
        timeoutMs: config.timeoutMs,
        queueSize: config.queueSize,
        ...(this.#options.baseDelayMs === undefined ? {} : { baseDelayMs: this.#options.baseDelayMs }),
        onOutcome: (outcome) => this.#options.onOutcome?.(name, outcome),
        onShed: (event) => isCallEvent(event) && calls.carry(event),
      });
      target = { sink, calls };
      this.#sinks.set(key, target);
    }
    return target;
  }
}

/**
 * Ends a webhook's windows at shutdown. Aggregates the full queue sheds are carried back; each
 * round waits for the queue to drain (which frees room for at least a queue's worth), until the
 * deadline. Bounded in rounds and time; what is left is dropped and logged with its count.
 */
async function flushWindows({ sink, calls }: Target, deadline: number): Promise<void> {
  for (let round = 0; round < MAX_FLUSH_ROUNDS && calls.flush() > 0; round++) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      sink.whenIdle(),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, left))),
    ]);
    clearTimeout(timer);
  }
  calls.close();
}

function single(event: CallAlertEvent): WebhookEvent {
  return { ...event, count: 1 };
}
