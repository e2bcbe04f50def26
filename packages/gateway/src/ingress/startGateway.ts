import type { Server } from 'node:http';
import { KEYLESS_POLICY } from '../config/pinSignature.js';
import { describeUpstream, loadGatewayConfig, loadPrincipals, type GatewayConfig } from '../config/index.js';
import { watchPinFiles, type PinWatcher, type ReloadSummary } from './pinWatcher.js';
import { createLogger, type GatewayLogger } from '../observe/logger.js';
import { startTracing, tracingSettings, type TracingHandle } from '../observe/tracingSdk.js';
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
  /**
   * Re-reads the gateway file's `principals` block and the servers folder now (SIGHUP); changed
   * scopes and pins are in force for the next request.
   */
  reload(): Promise<ReloadSummary>;
  /**
   * Stops accepting connections, ends listening SSE streams, lets in-flight requests finish for up
   * to `graceMs` (default 0: at once), then closes what is left and the admin listener.
   */
  close(options?: { readonly graceMs?: number }): Promise<void>;
}

/** Starts tracing when the `telemetry` block or the OTEL_* variables ask for it (docs/telemetry.md). */
async function startConfiguredTracing(
  config: GatewayConfig,
  logger: GatewayLogger,
): Promise<TracingHandle | undefined> {
  const settings = tracingSettings(config.telemetry, process.env);
  if (settings === undefined) return undefined;
  const tracing = await startTracing(settings, logger);
  logger.info(
    { event: 'telemetry.started', endpoint: tracing.endpoint, service: settings.serviceName },
    'OpenTelemetry tracing on',
  );
  return tracing;
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
  /**
   * How long a reload waits between its two reads of each pin file, so that a file still being
   * written is not read as a pin (PinWatcherOptions.settleMs). @default 200
   */
  readonly settleMs?: number;
}

/**
 * Reads the gateway file's `principals` block again and puts it in force (docs/scopes.md); a block
 * that does not load leaves the last good one in force (`principals.reload_failed`). A pin served
 * alone, or a config loaded by the caller (`fromFile` false), has no gateway file to read again.
 */
async function reloadPrincipals(gateway: Gateway, config: GatewayConfig, fromFile: boolean): Promise<void> {
  if (!fromFile || config.pinFile !== undefined) return;
  try {
    gateway.replacePrincipals(await loadPrincipals(config.file));
  } catch (error) {
    gateway.logger.error(
      { event: 'principals.reload_failed', file: config.file, err: (error as Error).message },
      'the principals block did not load: the last good one stays in force',
    );
  }
}

/** Watches the servers folder; a reloaded pin changes what the review page shows, so it is told. */
function watchPins(
  gateway: Gateway,
  config: GatewayConfig,
  observer: GatewayObserver,
  options: Pick<StartGatewayOptions, 'watch' | 'settleMs'>,
): PinWatcher {
  return watchPinFiles({
    dir: config.serversDir,
    ...(config.pinFile === undefined ? {} : { file: config.pinFile }),
    gateway: {
      upsertServer(server) {
        gateway.upsertServer(server);
        observer.noteChange();
      },
      removeServer(name) {
        gateway.removeServer(name);
        observer.noteChange();
      },
    },
    logger: gateway.logger,
    initial: config.servers,
    // A gateway file that names no key still reloads its pins under a policy (docs/manifests.md).
    signatures: config.signatures ?? KEYLESS_POLICY,
    watch: options.watch ?? true,
    ...(options.settleMs === undefined ? {} : { settleMs: options.settleMs }),
  });
}

/** The `gateway.started` line (and `gateway.no_servers` when the folder is empty). */
function logStarted(logger: GatewayLogger, config: GatewayConfig, url: string, adminUrl: string): void {
  logger.info(
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
    logger.warn(
      { event: 'gateway.no_servers', servers: config.serversDir },
      'no pin files in the servers folder: every route answers 404 until one is added',
    );
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
  const logger = options.logger ?? createLogger({ level: config.log.level });
  // Before the routes are built: they continue the clients' traces only while tracing is on.
  const tracing = await startConfiguredTracing(config, logger);
  const gateway = createGateway(config, { logger });
  // The review page's approvals reload at once (the watcher, created once listening, does it).
  const later: { watcher?: PinWatcher } = {};
  const reload = async (): Promise<ReloadSummary | undefined> => {
    await reloadPrincipals(gateway, config, typeof source === 'string');
    return later.watcher?.reload();
  };
  const listeners = await startListeners(gateway, config, {
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.adminPort === undefined ? {} : { adminPort: options.adminPort }),
    reload,
  }).catch(async (error: unknown) => {
    await tracing?.close();
    throw error;
  });
  const { server, url, adminUrl, observer } = listeners;
  logStarted(gateway.logger, config, url, adminUrl);
  const watcher = watchPins(gateway, config, observer, options);
  later.watcher = watcher;
  return {
    gateway,
    config,
    server,
    url,
    adminUrl,
    observer,
    reload: async () => (await reload())!,
    close: async (closeOptions = {}) => {
      const graceMs = closeOptions.graceMs ?? 0;
      watcher.close();
      // Without a grace period bridged sessions end first, so their streams end cleanly; with one,
      // in-flight requests finish first (bridged streams are in flight until the grace ends).
      if (graceMs === 0) await gateway.close();
      await listeners.drain(graceMs);
      if (graceMs > 0) await gateway.close();
      await listeners.closeAdmin(Math.min(graceMs, 2000));
      // Last: the spans of the requests that just finished are exported before the process ends.
      await tracing?.close();
    },
  };
}
