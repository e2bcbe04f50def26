import type { Server } from 'node:http';
import type { GatewayConfig } from '../config/index.js';
import { GatewayObserver } from '../observe/gatewayObserver.js';
import type { Gateway } from './createGateway.js';
import { listenFailure } from './listenFailure.js';
import { listen } from './createGateway.js';
import { listenDrainable, type DrainResult } from './drainableServer.js';
import { createReviewApp, type ReviewApp } from '../review/reviewApp.js';

/** The review page of the admin listener (`admin.ui`, docs/review-ui.md), unless it is `off`. */
function reviewPage(
  gateway: Gateway,
  config: GatewayConfig,
  observer: GatewayObserver,
  reload: (() => Promise<unknown>) | undefined,
): ReviewApp | undefined {
  const mode = config.admin.ui ?? 'review';
  if (mode === 'off') return undefined;
  return createReviewApp({
    mode,
    ...(config.admin.token === undefined ? {} : { token: config.admin.token }),
    observer,
    logger: gateway.logger,
    servers: () => [...gateway.routes.values()].map((route) => route.guard.config),
    timeoutMs: config.limits.upstreamTimeoutMs,
    reload: reload ?? (() => Promise.resolve()),
  });
}

/** Options of {@link startListeners}. */
export interface ListenersOptions {
  /** Overrides `listen.port` (0 picks a free port). */
  readonly port?: number;
  /** Overrides `admin.port` (0 picks a free port). */
  readonly adminPort?: number;
  /** Reloads the pin files now: the review page calls it after an approval. @default nothing */
  readonly reload?: () => Promise<unknown>;
}

/** The two listeners of a gateway: MCP traffic, and the admin API beside it. */
export interface GatewayListeners {
  readonly server: Server;
  /** Base URL of the MCP listener. */
  readonly url: string;
  readonly adminServer: Server;
  /** Base URL of the admin listener (`/healthz`, `/readyz`, `/metrics`, `/status`). */
  readonly adminUrl: string;
  readonly observer: GatewayObserver;
  /**
   * Drains the MCP listener: `/readyz` turns 503, no new connections, listening SSE streams end,
   * in-flight requests get up to `graceMs`. The admin listener stays up; see {@link closeAdmin}.
   */
  drain(graceMs: number): Promise<DrainResult>;
  /** Lets queued webhook events go out (up to `graceMs`), then closes the admin listener. */
  closeAdmin(graceMs: number): Promise<void>;
}

/**
 * Observes a gateway (metrics, status, webhooks, telemetry hooks) and starts its listeners: the
 * MCP listener with in-flight tracking for graceful shutdown, then the admin listener. `/readyz`
 * is 200 once both are bound.
 */
export async function startListeners(
  gateway: Gateway,
  config: GatewayConfig,
  options: ListenersOptions = {},
): Promise<GatewayListeners> {
  const observer = new GatewayObserver({ config, logger: gateway.logger });
  observer.attach(gateway);
  gateway.alerts.useTelemetry(observer);
  const review = reviewPage(gateway, config, observer, options.reload);
  const port = options.port ?? config.listen.port;
  const mcp = await listenDrainable(gateway.app, config.listen.host, port).catch((error: unknown) => {
    review?.close();
    throw listenFailure(error, { listener: 'mcp', setting: 'listen.port' }, config.listen.host, port);
  });
  let admin: { server: Server; url: string };
  const adminPort = options.adminPort ?? config.admin.port;
  try {
    admin = await listen(observer.createAdminApp(review?.router), config.admin.host, adminPort);
  } catch (error) {
    // The admin port is taken: the gateway does not start half-observable.
    review?.close();
    await mcp.drain({ graceMs: 0, streams: observer.streams, logger: gateway.logger });
    throw listenFailure(error, { listener: 'admin', setting: 'admin.port' }, config.admin.host, adminPort);
  }
  observer.markReady();
  return {
    server: mcp.server,
    url: mcp.url,
    adminServer: admin.server,
    adminUrl: admin.url,
    observer,
    drain: (graceMs) => {
      observer.markDraining();
      return mcp.drain({ graceMs, streams: observer.streams, logger: gateway.logger });
    },
    closeAdmin: async (graceMs) => {
      review?.close();
      await observer.close(graceMs);
      await new Promise<void>((resolve) => {
        admin.server.close(() => resolve());
        admin.server.closeAllConnections();
      });
    },
  };
}
