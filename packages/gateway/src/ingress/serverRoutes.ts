import type { ScopeTable } from '../state/scopeTable.js';
import type { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Router } from 'express';
import { isStdioUpstream, type ServerConfig } from '../config/index.js';
import { ServerCheckpoint } from '../checkpoint/serverCheckpoint.js';
import type { Alerts } from '../observe/alerts.js';
import type { GatewayLogger } from '../observe/logger.js';
import type { SessionStore } from '../state/sessionStore.js';
import type { ToolDigester } from '../state/toolDigester.js';
import { BridgeSessions, ClientQuota } from './bridgeSessions.js';
import { legacySseFront } from './legacySseFront.js';
import { pinGuard, withCheckpoint, type PinGuardRouter } from './pinGuard.js';
import { statelessFront } from './statelessFront.js';
import type { StatelessSession } from './statelessSession.js';
import { streamableFront } from './streamableFront.js';

/** What the routes of one server share with the rest of the gateway. */
export interface ServerRoutesOptions {
  readonly logger: GatewayLogger;
  readonly alerts: Alerts;
  readonly sessions: SessionStore;
  readonly digester: ToolDigester;
  /** The principals' scopes in force, shared by every checkpoint (docs/scopes.md). */
  readonly scopes: ScopeTable;
  readonly maxBodyBytes: number;
  readonly upstreamTimeoutMs: number;
  readonly streamIdleMs: number;
  /** Bridged sessions (children, upstream streams) per server and front. @default 100 */
  readonly maxBridgedSessions?: number;
  /** A bridged session with no request and no open stream for this long is closed. @default 5 minutes */
  readonly idleMs?: number;
  /** Bridged sessions one client (credential, else remote address) may hold, across this server's fronts. @default 8 */
  readonly bridgedPerClient?: number;
  /** Bridged sessions one remote address may hold, whatever credentials it sends, across this server's fronts. @default 32 */
  readonly bridgedPerAddress?: number;
}

/** The routes of one server, all sharing its checkpoint. */
export interface ServerRoutes {
  /** `/<name>/mcp`: Streamable HTTP (the transparent proxy, or the gateway's own endpoint over a bridge). */
  readonly mcp: PinGuardRouter;
  /** `/<name>/sse` and `/<name>/messages`: the 2024-11-05 HTTP+SSE front. */
  readonly legacy: Router;
  /** Ends every bridged session of this server (children are stopped). */
  close(): Promise<void>;
}

/**
 * Builds a server's routes by its upstream kind: an HTTP url with Streamable HTTP is proxied
 * transparently by pinGuard; a command (stdio), a 2024-11-05 SSE url or an upstream the gateway
 * is the OAuth client of (`auth.mode: client`) is bridged message by message. Either way the
 * legacy HTTP+SSE front is offered too, and one checkpoint decides for all.
 */
export function createServerRoutes(server: ServerConfig, options: ServerRoutesOptions): ServerRoutes {
  // Client mode (auth.mode: client) is bridged too: the gateway's own client carries the stored bearer.
  const bridged =
    !isStdioUpstream(server.upstream) &&
    server.upstream.transport === 'streamable-http' &&
    server.auth?.mode !== 'client'
      ? undefined
      : server;
  let checkpoint: ServerCheckpoint;
  let mcp: PinGuardRouter;
  const shared = {
    logger: options.logger,
    maxBodyBytes: options.maxBodyBytes,
    timeoutMs: options.upstreamTimeoutMs,
    streamIdleMs: options.streamIdleMs,
  };
  const limits = {
    max: options.maxBridgedSessions ?? 100,
    idleMs: options.idleMs ?? 300_000,
    quota: new ClientQuota(options.bridgedPerClient ?? 8),
    // The credential is not verified here: without a bound per address, one address rotating
    // Authorization values would take the server's whole bound. Four clients' worth by default.
    addressQuota: new ClientQuota(options.bridgedPerAddress ?? 32),
  };
  const streamSessions = new BridgeSessions<StreamableHTTPServerTransport>(limits);
  const legacySessions = new BridgeSessions<SSEServerTransport>(limits);
  const statelessSessions = new BridgeSessions<StatelessSession>(limits);
  if (bridged === undefined) {
    mcp = pinGuard({
      pin: server,
      logger: options.logger,
      alerts: options.alerts,
      sessions: options.sessions,
      digester: options.digester,
      scopes: options.scopes,
      maxBodyBytes: options.maxBodyBytes,
      upstreamTimeoutMs: options.upstreamTimeoutMs,
      streamIdleMs: options.streamIdleMs,
    });
    checkpoint = mcp.checkpoint;
  } else {
    checkpoint = new ServerCheckpoint({
      config: bridged,
      sessions: options.sessions,
      digester: options.digester,
      alerts: options.alerts,
      logger: options.logger,
      scopes: options.scopes,
    });
    const stateless = statelessFront({ ...shared, checkpoint }, statelessSessions);
    mcp = withCheckpoint(streamableFront({ ...shared, checkpoint }, streamSessions, stateless), checkpoint);
  }
  return {
    mcp,
    legacy: legacySseFront({ ...shared, checkpoint }, legacySessions),
    close: async () => {
      await Promise.all([streamSessions.closeAll(), legacySessions.closeAll(), statelessSessions.closeAll()]);
    },
  };
}
