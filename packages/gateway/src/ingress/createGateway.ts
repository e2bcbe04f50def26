import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context } from '@opentelemetry/api';
import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import {
  upstreamIdentity,
  type AggregateConfig,
  type GatewayConfig,
  type PrincipalConfig,
  type ServerConfig,
} from '../config/index.js';
import { Alerts } from '../observe/alerts.js';
import { createLogger, type GatewayLogger } from '../observe/logger.js';
import { continueClientTrace, tracingActive } from '../observe/tracing.js';
import { SessionStore } from '../state/sessionStore.js';
import { ToolDigester } from '../state/toolDigester.js';
import { ScopeTable } from '../state/scopeTable.js';
import { PrincipalGate } from './principalGate.js';
import { createCorsHandler, createOriginCheck, type CorsHandler } from './corsHandler.js';
import { formatUrl } from './drainableServer.js';
import { servesWithoutExpress, type PinGuardRouter } from './pinGuard.js';
import { RouteGates } from './routeGates.js';
import { createServerRoutes, type ServerRoutesOptions } from './serverRoutes.js';
import type { AggregateRouteOptions } from './aggregateFront.js';
import { lazyAggregateRoute, type LazyAggregateRoute } from './aggregateRoute.js';

/** Options of {@link createGateway}. */
export interface CreateGatewayOptions {
  /** @default createLogger at the config's level: JSON lines on stdout (pretty on a terminal) */
  readonly logger?: GatewayLogger;
}

/** A multi-server gateway app: routes `/<name>/mcp`, one checkpoint per pinned server. */
export interface Gateway {
  readonly app: Express;
  readonly logger: GatewayLogger;
  readonly alerts: Alerts;
  readonly sessions: SessionStore;
  /** The checkpoint of each routed server, by name. */
  readonly routes: ReadonlyMap<string, PinGuardRouter>;
  /** Adds a server's route, or puts its new pin in force (the route and its streams stay up). */
  upsertServer(server: ServerConfig): void;
  /** Removes a server's route. */
  removeServer(name: string): void;
  /** The principals' scopes in force (docs/scopes.md). */
  readonly scopes: ScopeTable;
  /** Puts a new `principals` block in force (undefined: none) for the next request. */
  replacePrincipals(principals: readonly PrincipalConfig[] | undefined): void;
  /** Ends every bridged session (stdio children are stopped, SSE streams end); call on shutdown. */
  close(): Promise<void>;
}

/** Builds the whole gateway app from a loaded config; `toolpin serve` is a thin CLI over it. */
export function createGateway(config: GatewayConfig, options: CreateGatewayOptions = {}): Gateway {
  const logger = options.logger ?? createLogger({ level: config.log.level });
  const alerts = new Alerts(logger);
  const sessions = new SessionStore(config.sessions);
  const scopes = new ScopeTable(config.principals);
  const digester = new ToolDigester();
  const routesOptions = serverRoutesOptions(config, { logger, alerts, sessions, digester, scopes });
  const routes = new Map<string, PinGuardRouter>();
  // The 2024-11-05 HTTP+SSE front of each server (/<name>/sse, /<name>/messages), and what ends its sessions.
  const legacyRoutes = new Map<string, Router>();
  const closers = new Map<string, () => Promise<void>>();
  // resource-server routes verify tokens before anything else of any of their fronts (docs/oauth.md).
  const principals = new PrincipalGate(scopes, logger);
  const gates = new RouteGates(logger, principals);
  const aggregate =
    config.aggregate === undefined
      ? undefined
      : lazyAggregateRoute({
          ...aggregateRouteOptions(config.aggregate, routes, logger, routesOptions),
          // The members' upstream sessions are the gateway's own: no principal's on the servers' routes.
          onUpstreamSession: (server, sessionId) => principals.reserveSession(server, sessionId),
        });
  const gateway: Gateway = {
    app: createGatewayApp(config, logger, { routes, legacyRoutes, gates, principals, aggregate }),
    logger,
    alerts,
    sessions,
    routes,
    scopes,
    replacePrincipals: (next) => replacePrincipals(scopes, next, logger),
    upsertServer(server) {
      gates.update(server);
      const existing = routes.get(server.name);
      if (
        existing !== undefined &&
        upstreamIdentity(existing.checkpoint.config.upstream) === upstreamIdentity(server.upstream)
      ) {
        existing.checkpoint.replaceConfig(server);
        return;
      }
      void closers.get(server.name)?.();
      const built = createServerRoutes(server, routesOptions);
      routes.set(server.name, built.mcp);
      legacyRoutes.set(server.name, built.legacy);
      closers.set(server.name, built.close);
    },
    removeServer(name) {
      gates.remove(name);
      routes.delete(name);
      legacyRoutes.delete(name);
      void closers.get(name)?.();
      closers.delete(name);
    },
    async close() {
      await Promise.all(
        [...closers.values(), ...(aggregate === undefined ? [] : [aggregate.close])].map((close) => close()),
      );
    },
  };
  for (const server of config.servers) gateway.upsertServer(server);
  return gateway;
}

/** Puts a reloaded `principals` block in force for the next request, and says so. */
function replacePrincipals(
  scopes: ScopeTable,
  next: readonly PrincipalConfig[] | undefined,
  logger: GatewayLogger,
): void {
  scopes.replace(next);
  logger.info(
    { event: 'principals.reloaded', principals: next?.map((principal) => principal.name) ?? [] },
    'principals in force for the next request',
  );
}

/** What the aggregate route is built from: the live routes' checkpoints and the servers' bounds. */
function aggregateRouteOptions(
  block: AggregateConfig,
  routes: ReadonlyMap<string, PinGuardRouter>,
  logger: GatewayLogger,
  shared: ServerRoutesOptions,
): AggregateRouteOptions {
  return {
    block,
    checkpoints: () => new Map([...routes].map(([name, route]) => [name, route.checkpoint])),
    logger,
    maxBodyBytes: shared.maxBodyBytes,
    timeoutMs: shared.upstreamTimeoutMs,
    streamIdleMs: shared.streamIdleMs,
    idleMs: shared.idleMs ?? 300_000,
    ...(shared.bridgedPerClient === undefined ? {} : { bridgedPerClient: shared.bridgedPerClient }),
    ...(shared.bridgedPerAddress === undefined ? {} : { bridgedPerAddress: shared.bridgedPerAddress }),
  };
}

/** What every server's routes share: the gateway's state and the bounds of its config. */
function serverRoutesOptions(
  config: GatewayConfig,
  shared: Pick<ServerRoutesOptions, 'logger' | 'alerts' | 'sessions' | 'digester' | 'scopes'>,
): ServerRoutesOptions {
  return {
    ...shared,
    maxBodyBytes: config.limits.maxBodyBytes,
    upstreamTimeoutMs: config.limits.upstreamTimeoutMs,
    streamIdleMs: config.limits.streamIdleMs,
    // The short idle bound of bridged sessions (their children), never beyond the sessions' TTL.
    idleMs: Math.min(config.sessions.bridgedIdleSeconds ?? 300, config.sessions.ttlSeconds) * 1000,
    ...(config.sessions.bridgedPerClient === undefined
      ? {}
      : { bridgedPerClient: config.sessions.bridgedPerClient }),
    ...(config.sessions.bridgedPerAddress === undefined
      ? {}
      : { bridgedPerAddress: config.sessions.bridgedPerAddress }),
  };
}

/** The express app over the live route maps (servers come and go on reload without rebuilding it). */
function createGatewayApp(
  config: GatewayConfig,
  logger: GatewayLogger,
  live: {
    readonly routes: ReadonlyMap<string, PinGuardRouter>;
    readonly legacyRoutes: ReadonlyMap<string, Router>;
    readonly gates: RouteGates;
    readonly principals: PrincipalGate;
    readonly aggregate: LazyAggregateRoute | undefined;
  },
): Express {
  const { routes, legacyRoutes, gates, principals, aggregate } = live;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The aggregate route, `/mcp` exactly (docs/aggregate.md): before the servers' routes.
  if (aggregate !== undefined)
    app.use('/mcp', (req: Request, res: Response, next: NextFunction) => {
      if (req.path !== '/') return next();
      principals.admit('aggregate', req, res, () => aggregate.handle(req, res, next));
    });
  // One dynamic route, so servers can come and go on reload without rebuilding the app.
  app.use('/:server/mcp', (req: Request, res: Response, next: NextFunction) => {
    const name = String(req.params.server);
    const route = routes.get(name);
    if (route === undefined) return next();
    gates.admit(name, req, res, () => route(req, res, next));
  });
  app.use('/:server', (req: Request, res: Response, next: NextFunction) => {
    const name = String(req.params.server);
    const route = legacyRoutes.get(name);
    if (route === undefined) return next();
    gates.admit(name, req, res, () => route(req, res, next));
  });
  serveMcpBeforeExpress(app, routes, gates);
  answerFirst(app, (req, res) => gates.answerDiscovery(req, res));
  // The cors block's origins, or (without one) only this machine's: a browser page of any other origin
  // (DNS rebinding) is refused before any route.
  answerFirst(
    app,
    config.cors === undefined ? createOriginCheck(logger) : createCorsHandler(config.cors, logger),
  );
  // The client's traceparent is the parent of every span of its request (only while tracing is on).
  if (tracingActive()) continueClientTraces(app);
  app.use((req: Request, res: Response) => {
    res.status(404).json({
      error: 'not_found',
      message: `No MCP server is routed at ${req.path}`,
      servers: [
        ...(aggregate === undefined ? [] : ['/mcp']),
        ...[...routes.keys()].map((name) => `/${name}/mcp`),
      ],
    });
  });
  return app;
}

type ExpressHandle = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

// `/<name>/mcp` (or with a trailing slash), for a plain server name; anything else goes to express.
const MCP_PATH = /^\/([A-Za-z0-9._~-]+)\/mcp\/?$/;

/**
 * Serves a routed server's `/<name>/mcp` endpoint before express when its handler needs nothing
 * express adds (pinGuard's): express alone costs tens of microseconds per request (prototype swaps,
 * router, final handler; measured by pnpm bench), as much as the whole inspection of a tools/call.
 * The URL is trimmed as express's mount would; a request the handler passes on, and every other
 * path (odd spellings included), goes through express as before.
 */
function serveMcpBeforeExpress(
  app: Express,
  routes: ReadonlyMap<string, PinGuardRouter>,
  gates: RouteGates,
): void {
  const target = app as unknown as { handle: ExpressHandle };
  const handleWithExpress = target.handle.bind(app);
  target.handle = (req, res, next) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const name = MCP_PATH.exec(query < 0 ? url : url.slice(0, query))?.[1];
    const route = name === undefined ? undefined : routes.get(name);
    if (route === undefined || !servesWithoutExpress(route)) return handleWithExpress(req, res, next);
    gates.admit(name!, req, res, () => {
      req.url = query < 0 ? '/' : `/${url.slice(query)}`;
      route(req as Request, res as Response, (error?: unknown) => {
        req.url = url;
        if (error === undefined) return handleWithExpress(req, res, next);
        // pinGuard passes on only errors met after its answer started, which can only end the connection.
        if (res.headersSent) return void req.socket.destroy();
        res.writeHead(500).end();
      });
    });
  };
}

/**
 * Runs `answer` before every route (both ways a request is served): it may answer. The last one
 * installed runs first (the `cors` block's handler, then OAuth discovery).
 */
function answerFirst(app: Express, answer: CorsHandler): void {
  const target = app as unknown as { handle: ExpressHandle };
  const handle = target.handle.bind(app);
  target.handle = (req, res, next) => {
    if (!answer(req, res)) handle(req, res, next);
  };
}

/** Runs every request (both ways it is served) in the trace context its W3C headers carry. */
function continueClientTraces(app: Express): void {
  const target = app as unknown as { handle: ExpressHandle };
  const handle = target.handle.bind(app);
  target.handle = (req, res, next) =>
    context.with(continueClientTrace(req.headers), () => handle(req, res, next));
}

/** Listens on host:port and resolves with the bound address (port 0 picks a free one). */
export function listen(app: Express, host: string, port: number): Promise<{ server: Server; url: string }> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      const address = server.address() as AddressInfo;
      resolve({ server, url: formatUrl(host, address.port) });
    });
  });
}
