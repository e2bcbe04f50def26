import type { IncomingHttpHeaders } from 'node:http';
import { dirname, isAbsolute } from 'node:path';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerCheckpoint } from '../checkpoint/serverCheckpoint.js';
import type { GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import { MessageBridge } from '../transports/messageBridge.js';
import { openUpstream, type UpstreamConnection } from '../transports/openUpstream.js';
import { oauthOption } from '../transports/upstreamOAuth.js';
import { artifactOption } from '../transports/verifyArtifact.js';

/** What the HTTP fronts over a bridged upstream share. */
export interface BridgeFrontOptions {
  readonly checkpoint: ServerCheckpoint;
  readonly logger: GatewayLogger;
  /** Bound on a request body. */
  readonly maxBodyBytes: number;
  /** Bound on each tools/list the gateway sends itself (fetch on miss). */
  readonly timeoutMs: number;
  /** Silence allowed from the upstream while it owes answers (limits.streamIdleMs). @default 300000 */
  readonly streamIdleMs?: number;
  /** stdio: how long a child gets to exit on its own when its session ends. @default 2000 */
  readonly graceMs?: number;
}

/** The credentials of the client's request that an HTTP upstream gets too. */
export function passedCredentials(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof headers.authorization === 'string') out.authorization = headers.authorization;
  if (typeof headers.cookie === 'string') out.cookie = headers.cookie;
  return out;
}

/**
 * Opens the server's upstream for one session (spawns the child, relative to the pin file's folder,
 * or connects to the URL with the client's `headers`); its stderr and failures logged under the session.
 */
export function openSessionUpstream(
  options: Pick<BridgeFrontOptions, 'checkpoint' | 'logger' | 'timeoutMs' | 'graceMs'>,
  sessionKey: string,
  headers: Readonly<Record<string, string>>,
): UpstreamConnection {
  const config = options.checkpoint.config;
  return openUpstream(config.upstream, {
    logger: options.logger,
    server: config.name,
    session: sessionLabel(sessionKey),
    headers,
    ...(isAbsolute(config.file) ? { baseDir: dirname(config.file) } : {}),
    ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
    timeoutMs: options.timeoutMs,
    ...oauthOption(config),
    ...artifactOption(config),
  });
}

/**
 * Opens the upstream of a new client session (spawns the child, or connects to the URL) and
 * bridges it to the session's client transport. Rejects, after logging why, when the upstream cannot be started.
 */
export async function openBridge(
  options: BridgeFrontOptions,
  clientTransport: Transport,
  sessionKey: string,
  headers: IncomingHttpHeaders,
  kind: 'streamable-http' | 'sse',
): Promise<MessageBridge> {
  const { checkpoint, logger } = options;
  const config = checkpoint.config;
  const upstream = openSessionUpstream(options, sessionKey, passedCredentials(headers));
  const bridge = new MessageBridge({
    checkpoint,
    sessionKey,
    client: clientTransport,
    front: kind,
    upstream,
    logger,
    timeoutMs: options.timeoutMs,
    ...(options.streamIdleMs === undefined ? {} : { streamIdleMs: options.streamIdleMs }),
  });
  try {
    await bridge.start();
  } catch (error) {
    await bridge.close();
    logger.error(
      {
        event: 'upstream.start_failed',
        server: config.name,
        session: sessionLabel(sessionKey),
        err: (error as Error).message,
      },
      'upstream could not be started',
    );
    throw error;
  }
  logger.info(
    { event: 'session.opened', server: config.name, session: sessionLabel(sessionKey) },
    'bridged session opened',
  );
  return bridge;
}
