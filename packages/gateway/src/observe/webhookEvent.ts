import type { DenyData, DenyReason } from '../policy/decision.js';
import type { AlertEvent } from './alerts.js';
import type { DeliveryPriority } from './deliveryQueue.js';

/** The alert events about single calls, which a refusing client can produce at any rate. */
export type CallAlertEvent = Extract<AlertEvent, { event: 'call.blocked' | 'call.flagged' }>;

/** A call event as a webhook receives it when it is the first of its window: `count` is 1. */
export type SingleCallEvent = CallAlertEvent & { readonly count: number };

/**
 * The calls of one server, tool and reason counted in one window after the first (which went out
 * on its own): the sum of `count` over a webhook's call events is the number of calls refused.
 */
export interface AggregatedCallEvent {
  readonly event: CallAlertEvent['event'];
  readonly server: string;
  /** The tool named by the calls; null for the calls of tools beyond the per-window limit of distinct keys. */
  readonly tool: string | null;
  readonly reason: DenyReason;
  readonly count: number;
  /** Up to 10 distinct session labels the calls came from (to find them in the log). */
  readonly sessions: readonly string[];
  /** The first and the last call counted, ISO 8601. */
  readonly window: { readonly first: string; readonly last: string };
  /** The decision of the last call counted. */
  readonly decision: DenyData;
  readonly aggregated: true;
}

/** Anything a webhook queue carries. */
export type WebhookEvent = Exclude<AlertEvent, CallAlertEvent> | SingleCallEvent | AggregatedCallEvent;

/** True for the events about calls (as emitted, single or aggregated). */
export function isCallEvent<E extends AlertEvent | WebhookEvent>(
  event: E,
): event is Extract<E, { event: CallAlertEvent['event'] }> {
  return event.event === 'call.blocked' || event.event === 'call.flagged';
}

/** Catalog events (drift, recovery) are few and each one matters; call events are shed first. */
export function webhookPriority(event: WebhookEvent): DeliveryPriority {
  return isCallEvent(event) ? 'low' : 'high';
}
