import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AlertEvent } from './alerts.js';
import type { UpstreamContact } from './telemetry.js';
import type { WebhookOutcome } from './webhookSink.js';

/** Where the gauges read their values at scrape time (the live gateway, which reloads change). */
export interface MetricsSources {
  /** Sessions (or server+credential observations) the SessionStore holds. */
  sessions(): number;
  /** Open SSE streams per server. */
  streams(): ReadonlyMap<string, number>;
  /** The pin in force per routed server. */
  pins(): Iterable<{ readonly server: string; readonly catalog: string; readonly mode: string }>;
  /** Events waiting per webhook. */
  webhookQueues(): ReadonlyMap<string, number>;
}

/** Buckets of the upstream latency histogram, in seconds: sub-millisecond proxies to slow tools. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

// The `method` label comes from clients: only methods of the MCP specification (and the HTTP verbs
// of the endpoint) become label values, anything else counts as `other`, so a client cannot grow
// the registry without bound by inventing method names.
const KNOWN_METHODS = new Set([
  'GET',
  'DELETE',
  'initialize',
  'ping',
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'notifications/tasks/status',
]);

/** The `surface` label of a catalog event: `tools` unless the event names another surface. */
function surfaceOf(event: AlertEvent): string {
  return 'surface' in event && event.surface !== undefined ? event.surface : 'tools';
}

function statusClass(contact: UpstreamContact): string {
  return contact.status === undefined ? 'error' : `${Math.floor(contact.status / 100)}xx`;
}

/** The gauges, read from `sources` when `/metrics` is scraped. */
function registerGauges(registers: Registry[], sources: MetricsSources): void {
  new Gauge({
    name: 'toolpin_active_sessions',
    help: 'Sessions (and 2026-07-28 server+credential observations) held in the session store',
    registers,
    collect() {
      this.set(sources.sessions());
    },
  });
  new Gauge({
    name: 'toolpin_sse_streams_open',
    help: 'SSE streams relayed to clients right now, by server',
    labelNames: ['server'],
    registers,
    collect() {
      this.reset();
      for (const [server, count] of sources.streams()) this.labels({ server }).set(count);
    },
  });
  new Gauge({
    name: 'toolpin_pin_info',
    help: 'The pin in force per server (value 1): its catalog digest and mode',
    labelNames: ['server', 'catalog', 'mode'],
    registers,
    collect() {
      this.reset();
      for (const pin of sources.pins())
        this.labels({ server: pin.server, catalog: pin.catalog, mode: pin.mode }).set(1);
    },
  });
  new Gauge({
    name: 'toolpin_webhook_queue_depth',
    help: 'Alert events waiting for delivery, by webhook',
    labelNames: ['webhook'],
    registers,
    collect() {
      this.reset();
      for (const [webhook, depth] of sources.webhookQueues()) this.labels({ webhook }).set(depth);
    },
  });
}

/**
 * The gateway's Prometheus metrics, in a Registry of their own: several gateways in one process
 * (tests, embedding) never share or clash over counters, and nothing lands in prom-client's
 * global registry.
 */
export class GatewayMetrics {
  /** The registry `/metrics` serializes. */
  readonly registry = new Registry();
  readonly #requests: Counter<'server' | 'method'>;
  readonly #calls: Counter<'server' | 'decision' | 'reason'>;
  readonly #outOfScope: Counter<'server' | 'principal'>;
  readonly #catalogs: Counter<'server' | 'result' | 'surface'>;
  readonly #drift: Counter<'server' | 'kind' | 'severity' | 'surface'>;
  readonly #latency: Histogram<'server' | 'via' | 'status'>;
  readonly #webhooks: Counter<'webhook' | 'outcome'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'toolpin_requests_total',
      help: 'Client JSON-RPC messages with a method (and GET/DELETE on the endpoint), by server and method (other: not an MCP method)',
      labelNames: ['server', 'method'],
      registers,
    });
    this.#calls = new Counter({
      name: 'toolpin_calls_total',
      help: 'tools/call and prompts/get decisions by server, decision (allowed, blocked, flagged) and reason (none when allowed)',
      labelNames: ['server', 'decision', 'reason'],
      registers,
    });
    this.#outOfScope = new Counter({
      name: 'toolpin_out_of_scope_total',
      help: 'Requests refused not_in_scope by server and principal (none: the request matched no principal)',
      labelNames: ['server', 'principal'],
      registers,
    });
    this.#catalogs = new Counter({
      name: 'toolpin_catalogs_total',
      help: 'Completed observations by server, result (verified, drift) and surface (tools, prompts, resourceTemplates, instructions)',
      labelNames: ['server', 'result', 'surface'],
      registers,
    });
    this.#drift = new Counter({
      name: 'toolpin_drift_events_total',
      help: 'Drift findings by server, kind (changed, added, removed, wrong_subject, unverifiable), severity (high, low) and surface',
      labelNames: ['server', 'kind', 'severity', 'surface'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'toolpin_upstream_latency_seconds',
      help: 'Time to the upstream response headers, by server, via (proxy, fetch) and status class',
      labelNames: ['server', 'via', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#webhooks = new Counter({
      name: 'toolpin_webhook_events_total',
      help: 'Webhook alert events by webhook and outcome (delivered, failed, retried, dropped, suppressed, aggregated, carried)',
      labelNames: ['webhook', 'outcome'],
      registers,
    });
    registerGauges(registers, sources);
  }

  /** Alert sink: call decisions, catalog results and drift findings. */
  recordAlert(event: AlertEvent): void {
    switch (event.event) {
      case 'call.blocked':
      case 'call.flagged':
        this.#calls.inc({
          server: event.server,
          decision: event.event === 'call.blocked' ? 'blocked' : 'flagged',
          reason: event.decision.reason,
        });
        if (event.decision.reason === 'not_in_scope')
          this.#outOfScope.inc({ server: event.server, principal: event.decision.principal ?? 'none' });
        return;
      case 'catalog.verified':
        this.#catalogs.inc({ server: event.server, result: 'verified', surface: surfaceOf(event) });
        return;
      case 'catalog.drift': {
        const surface = surfaceOf(event);
        this.#catalogs.inc({ server: event.server, result: 'drift', surface });
        for (const finding of event.drift)
          this.#drift.inc({ server: event.server, kind: finding.kind, severity: finding.severity, surface });
        return;
      }
    }
  }

  /** Counts one client request. */
  recordRequest(server: string, method: string): void {
    this.#requests.inc({ server, method: KNOWN_METHODS.has(method) ? method : 'other' });
  }

  /** Counts one allowed tools/call or prompts/get. */
  recordAllowedCall(server: string): void {
    this.#calls.inc({ server, decision: 'allowed', reason: 'none' });
  }

  /** Observes the latency of one upstream contact. */
  recordUpstream(server: string, contact: UpstreamContact): void {
    this.#latency.observe({ server, via: contact.via, status: statusClass(contact) }, contact.seconds);
  }

  /** Counts one webhook outcome. */
  recordWebhook(webhook: string, outcome: WebhookOutcome | 'suppressed' | 'aggregated'): void {
    this.#webhooks.inc({ webhook, outcome });
  }

  /** The Prometheus text exposition of every metric. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
