import type { Server } from 'node:http';
import { describeUpstream, loadGatewayConfig, type GatewayConfig } from '../config/index.js';
import { watchPinFiles, type ReloadSummary } from './pinWatcher.js';
import type { GatewayLogger } from '../observe/logger.js';
import type { GatewayObserver } from '../observe/gatewayObserver.js';
import { createGateway, type Gateway } from './createGateway.js';
import { startListeners } from './gatewayListeners.js';

/** A gateway listening on its configured address. */
export interface RunningGateway {
  readonly gateway: Gateway;
  readonly config: GatewayConfig;
  readonly server: Server;
  /** Base URL of the MCP listener, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  /** Base URL of the admin listener (`/healthz`, `/readyz`, `/metrics`, `/status`), e.g. http://127.0.0.1:8081 */
  readonly adminUrl: string;
  /** Metrics, status board and webhooks of this gateway. */
  readonly observer: GatewayObserver;
  /** Re-reads the servers folder now (SIGHUP); changed pins are in force for the next decision. */
  reload(): Promise<ReloadSummary>;
  /**
   * Stops accepting connections, ends listening SSE streams, lets in-flight requests finish for up
   * to `graceMs` (default 0: at once), then closes what is left and the admin listener.
   */
  close(options?: { readonly graceMs?: number }): Promise<void>;
}

/** Options of {@link startGateway}. */
export interface StartGatewayOptions {
  /** Overrides `listen.port` of the gateway file (0 picks a free port). */
  readonly port?: number;
  /** Overrides `admin.port` of the gateway file (0 picks a free port). */
  readonly adminPort?: number;
  /** @default createLogger at the config's `log.level`: JSON lines on stdout (pretty on a terminal) */
  readonly logger?: GatewayLogger;
  /** Watch the servers folder and hot-reload pin files. @default true */
  readonly watch?: boolean;
}

/**
 * Loads the gateway file and its pins (or takes a config already loaded, such as
 * `loadSinglePinConfig`'s), and listens. A broken config rejects: the gateway does not start.
 */
export async function startGateway(
  source: string | GatewayConfig,
  options: StartGatewayOptions = {},
): Promise<RunningGateway> {
  const config = typeof source === 'string' ? await loadGatewayConfig(source) : source;
  const gateway = createGateway(config, options.logger === undefined ? {} : { logger: options.logger });
  const listeners = await startListeners(gateway, config, {
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.adminPort === undefined ? {} : { adminPort: options.adminPort }),
  });
  const { server, url, adminUrl, observer } = listeners;
  gateway.logger.info(
    {
      event: 'gateway.started',
      url,
      admin: adminUrl,
      servers: config.servers.map((s) => ({
        name: s.name,
        route: `/${s.name}/mcp`,
        mode: s.mode,
        upstream: describeUpstream(s.upstream),
      })),
    },
    `toolpin listening on ${url}`,
  );
  if (config.servers.length === 0)
    gateway.logger.warn(
      { event: 'gateway.no_servers', servers: config.serversDir },
      'no pin files in the servers folder: every route answers 404 until one is added',
    );
  const watcher = watchPinFiles({
    dir: config.serversDir,
    ...(config.pinFile === undefined ? {} : { file: config.pinFile }),
    gateway,
    logger: gateway.logger,
    initial: config.servers,
    watch: options.watch ?? true,
  });
  return {
    gateway,
    config,
    server,
    url,
    adminUrl,
    observer,
    reload: () => watcher.reload(),
    close: async (closeOptions = {}) => {
      const graceMs = closeOptions.graceMs ?? 0;
      watcher.close();
      // Without a grace period bridged sessions end first, so their streams end cleanly; with one,
      // in-flight requests finish first (bridged streams are in flight until the grace ends).
      if (graceMs === 0) await gateway.close();
      await listeners.drain(graceMs);
      if (graceMs > 0) await gateway.close();
      await listeners.closeAdmin(Math.min(graceMs, 2000));
    },
  };
}
