import type { PrincipalScopes } from '../policy/principalScopes.js';
import {
  describeUpstream,
  type GatewayConfig,
  type PrincipalConfig,
  type ServerConfig,
} from '../config/index.js';
import { createAdminApp } from './adminApp.js';
import type { AdminAppOptions, ReadinessReport } from './adminApp.js';
import { AlertWebhooks } from './alertWebhooks.js';
import type { Alerts } from './alerts.js';
import type { GatewayLogger } from './logger.js';
import { GatewayMetrics } from './metrics.js';
import { OpenStreams } from './openStreams.js';
import { DriftAcknowledgements } from './driftAcknowledgements.js';
import { ItemActivity } from './itemActivity.js';
import { StatusBoard, type ServerStatus } from './statusBoard.js';
import type { GatewayTelemetry, OpenStream, UpstreamContact } from './telemetry.js';

/** What the observer reads from a gateway (see createGateway). */
export interface ObservedGateway {
  readonly alerts: Alerts;
  readonly sessions: { readonly size: number };
  readonly routes: ReadonlyMap<string, { readonly checkpoint: { readonly config: ServerConfig } }>;
  /** The principals' scopes in force (docs/scopes.md); absent or empty: no scopes. */
  readonly scopes?: { readonly scopes: PrincipalScopes | undefined };
}

/** Options of {@link GatewayObserver}. */
export interface GatewayObserverOptions {
  readonly config: GatewayConfig;
  readonly logger: GatewayLogger;
  /** First webhook retry delay. @default 500 */
  readonly webhookBaseDelayMs?: number;
}

/** `GET /status`. */
export interface StatusReport {
  readonly generatedAt: string;
  readonly state: ReadinessReport['state'];
  readonly servers: readonly ServerStatus[];
  /** The principals in force and what each may see (never a key); absent without a `principals` block. */
  readonly principals?: readonly PrincipalStatus[];
}

/** One principal in `GET /status`: how it is recognized and its servers' items per surface. */
export interface PrincipalStatus {
  readonly name: string;
  readonly recognizedBy: 'apiKey' | 'oauth' | 'local';
  readonly servers: PrincipalConfig['servers'];
}

/** The principals as `/status` shows them: no key hash, no claim values beyond the block's own. */
function principalStatusOf(principals: readonly PrincipalConfig[]): PrincipalStatus[] {
  return principals.map((principal) => ({
    name: principal.name,
    recognizedBy:
      principal.oauth !== undefined ? 'oauth' : principal.local !== undefined ? 'local' : 'apiKey',
    servers: principal.servers,
  }));
}

/**
 * Everything an operator sees of one gateway: it is the telemetry the request path reports to,
 * an alert sink (metrics, status board, webhooks), and the source of the admin API.
 */
export class GatewayObserver implements GatewayTelemetry {
  readonly metrics: GatewayMetrics;
  readonly status: StatusBoard;
  readonly webhooks: AlertWebhooks;
  readonly streams = new OpenStreams();
  /** Calls per item and first sightings of drift, for the review page. */
  readonly activity = new ItemActivity();
  /** Drift kept blocked on the review page: not sent to webhooks again. */
  readonly acknowledgements = new DriftAcknowledgements();
  readonly #listeners = new Set<() => void>();
  readonly #config: GatewayConfig;
  #gateway: ObservedGateway | undefined;
  #state: ReadinessReport['state'] = 'starting';

  constructor(options: GatewayObserverOptions) {
    this.#config = options.config;
    const serverConfig = (name: string): ServerConfig | undefined =>
      this.#gateway?.routes.get(name)?.checkpoint.config;
    this.status = new StatusBoard(serverConfig);
    this.metrics = new GatewayMetrics({
      sessions: () => this.#gateway?.sessions.size ?? 0,
      streams: () => this.streams.countByServer(),
      pins: () =>
        this.#servers().map((server) => ({
          server: server.name,
          catalog: server.pin.catalog,
          mode: server.mode,
        })),
      webhookQueues: () => this.webhooks.queues(),
    });
    this.webhooks = new AlertWebhooks({
      gateway: options.config.alerts,
      serverAlerts: (name) => serverConfig(name)?.alerts,
      logger: options.logger,
      onOutcome: (webhook, outcome) => this.metrics.recordWebhook(webhook, outcome),
      ...(options.webhookBaseDelayMs === undefined ? {} : { baseDelayMs: options.webhookBaseDelayMs }),
      acknowledged: (event) => this.acknowledgements.covers(event),
    });
  }

  /**
   * Calls `listener` after every alert event and every {@link noteChange} (the review page's live
   * updates); returns the function that stops it.
   */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Something the status shows changed outside alert events (a pin reloaded, an acknowledgement). */
  noteChange(): void {
    for (const listener of this.#listeners) listener();
  }

  /** Subscribes to the gateway's alert events. */
  attach(gateway: ObservedGateway): void {
    this.#gateway = gateway;
    gateway.alerts.addSink((event) => this.metrics.recordAlert(event));
    gateway.alerts.addSink((event) => this.status.recordAlert(event));
    gateway.alerts.addSink((event) => this.webhooks.send(event));
    gateway.alerts.addSink((event) => this.activity.recordAlert(event));
    gateway.alerts.addSink(() => this.noteChange());
  }

  /** The MCP listener is bound: `/readyz` turns 200. */
  markReady(): void {
    if (this.#state === 'starting') this.#state = 'ready';
  }

  /** Shutdown began: `/readyz` turns 503 so load balancers stop sending traffic. */
  markDraining(): void {
    this.#state = 'draining';
  }

  /** An express app serving the admin endpoints (and the review page's routes at `/ui`, when given). */
  createAdminApp(ui?: AdminAppOptions['ui']): ReturnType<typeof createAdminApp> {
    const token = this.#config.admin.token;
    return createAdminApp({
      host: this.#config.admin.host,
      ...(token === undefined ? {} : { token }),
      ...(ui === undefined ? {} : { ui }),
      metrics: this.metrics,
      readiness: () => this.readiness(),
      status: () => this.statusReport(),
    });
  }

  /** `GET /readyz`: ready once listening and until draining; each upstream's last contact for information. */
  readiness(): ReadinessReport {
    return {
      ready: this.#state === 'ready',
      state: this.#state,
      config: { file: this.#config.file, servers: this.#servers().length },
      upstreams: this.#servers().map((server) => ({
        server: server.name,
        upstream: describeUpstream(server.upstream),
        lastContact: this.status.lastContact(server.name),
      })),
    };
  }

  /** `GET /status`. */
  statusReport(): StatusReport {
    return {
      generatedAt: new Date().toISOString(),
      state: this.#state,
      servers: this.status.snapshot(this.#servers()),
      ...this.#principals(),
    };
  }

  /** Who may see what of `server` (docs/scopes.md); undefined without a `principals` block. */
  scopesOn(server: string): ReturnType<PrincipalScopes['scopesOn']> | undefined {
    return this.#gateway?.scopes?.scopes?.scopesOn(server);
  }

  #principals(): { principals?: readonly PrincipalStatus[] } {
    const principals = this.#gateway?.scopes?.scopes?.principals;
    return principals === undefined ? {} : { principals: principalStatusOf(principals) };
  }

  onRequest(server: string, method: string): void {
    this.metrics.recordRequest(server, method);
  }

  onCallAllowed(server: string, name: string): void {
    this.metrics.recordAllowedCall(server);
    this.activity.recordAllowed(server, name);
  }

  onUpstreamContact(server: string, contact: UpstreamContact): void {
    this.metrics.recordUpstream(server, contact);
    this.status.recordContact(server, contact);
  }

  onStreamOpened(stream: OpenStream): () => void {
    return this.streams.add(stream);
  }

  /** Gives queued webhook events up to `graceMs` to go out. */
  async close(graceMs = 0): Promise<void> {
    await this.webhooks.close(graceMs);
  }

  #servers(): ServerConfig[] {
    return [...(this.#gateway?.routes.values() ?? [])].map((route) => route.checkpoint.config);
  }
}
