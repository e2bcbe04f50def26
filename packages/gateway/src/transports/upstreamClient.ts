import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { UpstreamConfig } from '../config/index.js';
import { createLogger, type GatewayLogger } from '../observe/logger.js';
import { openUpstream } from './openUpstream.js';
import { CLIENT_INFO } from '../defaults.js';

/** Options of {@link connectUpstreamClient}. */
export interface ConnectUpstreamClientOptions {
  /** Where a stdio child's stderr goes. @default a pino logger on stderr */
  readonly logger?: GatewayLogger;
  /** Tags the child's stderr lines. @default 'pin' */
  readonly server?: string;
  /** stdio: pass this process's whole environment to the child. @default false */
  readonly inheritEnv?: boolean;
  /** stdio: the folder a relative `cwd` is resolved against. */
  readonly baseDir?: string;
  /** @default CLIENT_INFO (`toolpin` and the package's version) */
  readonly clientInfo?: { readonly name: string; readonly version: string };
}

/**
 * Connects an SDK Client to an upstream as the gateway reaches it (a spawned stdio command, or a
 * URL), initialize done: for embedding code (`@toolpin/gateway/transports`). `client.close()` ends
 * the child with its whole process group.
 */
export async function connectUpstreamClient(
  upstream: UpstreamConfig,
  options: ConnectUpstreamClientOptions = {},
): Promise<Client> {
  const logger = options.logger ?? createLogger({ destination: process.stderr });
  const { transport } = openUpstream(upstream, {
    logger,
    server: options.server ?? 'pin',
    session: 'pin',
    ...(options.inheritEnv === undefined ? {} : { inheritEnv: options.inheritEnv }),
    ...(options.baseDir === undefined ? {} : { baseDir: options.baseDir }),
  });
  const client = new Client({ ...(options.clientInfo ?? CLIENT_INFO) });
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close().catch(() => undefined);
    throw error;
  }
  return client;
}
