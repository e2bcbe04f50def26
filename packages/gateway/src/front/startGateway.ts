import type { Server } from 'node:http';
import { describeUpstream, loadGatewayConfig, type GatewayConfig } from '../config/index.js';
import type { GatewayLogger } from '../observe/logger.js';
import { createGateway, listen, type Gateway } from './createGateway.js';

/** A gateway listening on its configured address. */
export interface RunningGateway {
  readonly gateway: Gateway;
  readonly config: GatewayConfig;
  readonly server: Server;
  /** Base URL of the MCP listener, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  /** Stops accepting connections and closes open ones. */
  close(): Promise<void>;
}

/** Options of {@link startGateway}. */
export interface StartGatewayOptions {
  /** Overrides `listen.port` of the gateway file (0 picks a free port). */
  readonly port?: number;
  readonly logger?: GatewayLogger;
}

/** Loads the gateway file and its pins, and listens. A broken config rejects: the gateway does not start. */
export async function startGateway(file: string, options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const config = await loadGatewayConfig(file);
  const gateway = createGateway(config, options.logger === undefined ? {} : { logger: options.logger });
  const { server, url } = await listen(gateway.app, config.listen.host, options.port ?? config.listen.port);
  gateway.logger.info(
    { event: 'gateway.started', url, servers: config.servers.map((s) => ({ name: s.name, route: `/${s.name}/mcp`, mode: s.mode, upstream: describeUpstream(s.upstream) })) },
    `toolpin listening on ${url}`,
  );
  return {
    gateway,
    config,
    server,
    url,
    close: async () => {
      // Bridged sessions first: their children are stopped and their streams end cleanly.
      await gateway.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
