import { keyForPrincipal } from '../policy/sessionPrincipal.js';
import { scopePrincipalOf } from './requestPrincipal.js';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  NodeStreamableHTTPServerTransport,
  toNodeHandler,
  type NodeMcpRequestHandler,
} from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  isInitializeRequest,
  type McpHttpHandler,
  type Server,
} from '@modelcontextprotocol/server';
import express, { type Request, type Response, type Router } from 'express';
import { planAggregate, type AggregateConfig, type AggregateNamespace } from '../config/index.js';
import type { ServerCheckpoint } from '../checkpoint/serverCheckpoint.js';
import type { GatewayLogger } from '../observe/logger.js';
import { errorSummary } from '../observe/errorSummary.js';
import type { ListedSurface } from '../policy/pinSurface.js';
import type { BridgeEnd } from '../transports/messageBridge.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError, type JsonRpcId } from '../wire/jsonRpc.js';
import { AggregateMembers } from './aggregateMembers.js';
import { AGGREGATE } from './aggregateRoute.js';
import { combinedInstructions, createAggregateServer } from './aggregateServer.js';
import { refuseBadFraming, refuseSession } from './bridgeRefusals.js';
import {
  addressKeyOf,
  BridgeSessions,
  ClientQuota,
  clientKeyOf,
  credentialOf,
  isRefusal,
  serveNamedSession,
  type EndableSession,
  type SessionRefusal,
} from './bridgeSessions.js';
import { postedMessages, replyJson } from './clientReply.js';
import { SESSION_REQUIRED_MESSAGE } from './sessionRequired.js';
import { isLegacyHttpRequest } from './statelessSession.js';

/** What the aggregate route is built from. */
export interface AggregateRouteOptions {
  readonly block: AggregateConfig;
  /** The live checkpoint of each routed server (the gateway's, as reloads change them). */
  readonly checkpoints: () => ReadonlyMap<string, ServerCheckpoint>;
  readonly logger: GatewayLogger;
  readonly maxBodyBytes: number;
  readonly timeoutMs: number;
  readonly streamIdleMs?: number;
  /** An aggregate session (or a credential's 2026-07-28 members) idle this long is closed. */
  readonly idleMs: number;
  readonly bridgedPerClient?: number;
  readonly bridgedPerAddress?: number;
  /** A member upstream issued this session id to the gateway's own client (see AggregateMembersOptions). */
  readonly onUpstreamSession?: (server: string, sessionId: string) => void;
}

/** The `/mcp` route and what ends its sessions. */
export interface AggregateRoute {
  readonly router: Router;
  close(): Promise<void>;
}

/**
 * The aggregate route `/mcp` (docs/aggregate.md): one MCP server whose items are its members'
 * verified items, namespaced. A 2025-era client gets a session (`initialize`, `Mcp-Session-Id`,
 * DELETE, list_changed on its GET stream); a 2026-07-28 client is served without one, its
 * credential's member upstreams shared by its requests (list_changed on `subscriptions/listen`).
 * Each session holds one upstream per member, opened by the gateway's own client, and bounded as
 * the bridged sessions of a server are.
 */
export function createAggregateRoute(options: AggregateRouteOptions): AggregateRoute {
  const front = new AggregateHandler(options);
  const router = express.Router();
  router.all('/', (req, res, next) => {
    if (!refuseBadFraming(req, res, { logger: options.logger, server: AGGREGATE })) next();
  });
  router.post('/', express.raw({ type: () => true, limit: options.maxBodyBytes }), (req, res, next) => {
    front.handle(req, res).catch(next);
  });
  router.get('/', (req, res, next) => void front.handle(req, res).catch(next));
  router.delete('/', (req, res, next) => void front.handle(req, res).catch(next));
  return { router, close: () => front.close() };
}

/** One scope's members (a session's, or a credential's) and the instructions they give. */
interface Scope {
  readonly members: AggregateMembers;
  readonly instructions: () => string | undefined;
}

/** Routes `/mcp` requests to their aggregate session, opens one on `initialize`, serves 2026-07-28 requests. */
class AggregateHandler {
  readonly #options: AggregateRouteOptions;
  readonly #sessions: BridgeSessions<NodeStreamableHTTPServerTransport>;
  readonly #stateless: BridgeSessions<StatelessAggregate>;
  readonly #opening = new Map<string, Promise<StatelessAggregate | SessionRefusal>>();
  #problems = '';

  constructor(options: AggregateRouteOptions) {
    this.#options = options;
    const limits = {
      max: 100,
      idleMs: options.idleMs,
      quota: new ClientQuota(options.bridgedPerClient ?? 8),
      addressQuota: new ClientQuota(options.bridgedPerAddress ?? 32),
    };
    this.#sessions = new BridgeSessions(limits);
    this.#stateless = new BridgeSessions(limits);
  }

  async handle(req: Request, res: Response): Promise<void> {
    let body: unknown;
    if (req.method === 'POST') {
      const posted = postedMessages(req.body, res);
      if (posted === undefined) return;
      body = posted.body;
    }
    if (await serveNamedSession(this.#sessions, req, res, body)) return;
    if (req.method === 'POST' && isInitializeRequest(body)) return this.#initialize(req, res, body);
    if (req.method === 'POST' && !(await isLegacyHttpRequest(req, body)))
      return this.#serveStateless(req, res, body);
    replyJson(res, 400, jsonRpcError(null, ErrorCodes.SESSION_REQUIRED, SESSION_REQUIRED_MESSAGE));
  }

  /** The members and their names now: the block planned over the servers routed now. */
  namespace(): AggregateNamespace {
    const servers = [...this.#options.checkpoints().values()].map((checkpoint) => checkpoint.config);
    const plan = planAggregate(this.#options.block, servers);
    const problems = plan.problems.map((problem) => `${problem.field}: ${problem.note}`).join('\n');
    if (problems !== this.#problems) {
      this.#problems = problems;
      if (problems !== '')
        this.#options.logger.error(
          { event: 'aggregate.members_left_out', problems: plan.problems },
          'aggregate members left out after a reload',
        );
    }
    return plan.namespace;
  }

  /** Opens the members of a new scope (each on its own: one that cannot start is down, not fatal). */
  async #openScope(label: string, onChange: (surfaces: readonly ListedSurface[]) => void): Promise<Scope> {
    const options = this.#options;
    const members = new AggregateMembers({
      scope: label,
      checkpointOf: (server) => options.checkpoints().get(server),
      logger: options.logger,
      timeoutMs: options.timeoutMs,
      ...(options.streamIdleMs === undefined ? {} : { streamIdleMs: options.streamIdleMs }),
      onChange,
      ...(options.onUpstreamSession === undefined ? {} : { onUpstreamSession: options.onUpstreamSession }),
    });
    const namespace = this.namespace();
    await Promise.all(namespace.members.map((member) => members.link(member.server)));
    const instructions = (): string | undefined => {
      const live = members.live();
      return combinedInstructions(
        options.block.instructions,
        this.namespace().members.map((member) => {
          const link = live.get(member.server);
          const text =
            link === undefined
              ? undefined
              : link.checkpoint.deliveredInstructions(link.sessionKey, link.upstream.instructions);
          return { member, text };
        }),
      );
    };
    return { members, instructions };
  }

  /** An `initialize`: claims room for a session (or refuses), opens its members, and answers through its server. */
  async #initialize(req: Request, res: Response, body: unknown): Promise<void> {
    const initializeId = idOf(body);
    const client = clientKeyOf(req);
    const slot = this.#sessions.reserve(client, addressKeyOf(req));
    if (isRefusal(slot))
      return refuseSession(res, slot, this.#refusalContext(initializeId, client, this.#sessions));
    const id = randomUUID();
    // The members' changes reach the session's server once it exists.
    const told: { server?: Server } = {};
    const scope = await this.#openScope(
      keyForPrincipal(scopePrincipalOf(req.headers), `aggregate:${id}`),
      (surfaces) => void notifySession(told.server, surfaces),
    );
    const server = createAggregateServer({
      namespace: () => this.namespace(),
      members: scope.members,
      instructions: scope.instructions(),
      timeoutMs: this.#options.timeoutMs,
      logger: this.#options.logger,
    });
    told.server = server;
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: () => id });
    const session = new AggregateSession(scope.members, server, this.#options.logger, id);
    await server.connect(transport).catch(async (error: unknown) => {
      slot.release();
      await scope.members.close();
      throw error;
    });
    server.onclose = () => void session.close('client');
    if (!slot.fill(id, { carrier: session, handler: transport, credential: credentialOf(req.headers) }))
      return refuseSession(
        res,
        { refused: 'closing' },
        this.#refusalContext(initializeId, client, this.#sessions),
      );
    this.#options.logger.info({ event: 'session.opened', server: AGGREGATE }, 'aggregate session opened');
    this.#sessions.track(id, res);
    await transport.handleRequest(req, res, body);
  }

  #refusalContext(id: JsonRpcId, client: string, sessions: BridgeSessions<unknown>) {
    return {
      logger: this.#options.logger,
      server: AGGREGATE,
      id,
      client,
      sessions: sessions.size,
      retryAfterSeconds: sessions.retryAfterSeconds,
    };
  }

  /** A 2026-07-28 request: served by its credential's members, opened by its first request. */
  async #serveStateless(req: Request, res: ServerResponse, body: unknown): Promise<void> {
    const credential = credentialOf(req.headers);
    let aggregate = this.#stateless.get(credential, req.headers)?.handler;
    if (aggregate === undefined) {
      let pending = this.#opening.get(credential);
      if (pending === undefined) {
        pending = this.#openStateless(req, credential);
        this.#opening.set(credential, pending);
        const forget = (): void => void this.#opening.delete(credential);
        pending.then(forget, forget);
      }
      const opened = await pending;
      if (isRefusal(opened))
        return refuseSession(
          res,
          opened,
          this.#refusalContext(idOf(body), clientKeyOf(req), this.#stateless),
        );
      aggregate = opened;
    }
    this.#stateless.track(credential, res);
    await aggregate.serve(req, res, body);
  }

  async #openStateless(req: Request, credential: string): Promise<StatelessAggregate | SessionRefusal> {
    const slot = this.#stateless.reserve(clientKeyOf(req), addressKeyOf(req));
    if (isRefusal(slot)) return slot;
    const told: { aggregate?: StatelessAggregate } = {};
    const label = keyForPrincipal(scopePrincipalOf(req.headers), `aggregate:${credential}:${randomUUID()}`);
    const scope = await this.#openScope(label, (surfaces) => told.aggregate?.notify(surfaces));
    const aggregate = new StatelessAggregate(scope, this.#options, () => this.namespace());
    told.aggregate = aggregate;
    if (!slot.fill(credential, { carrier: aggregate, handler: aggregate, credential }))
      return { refused: 'closing' };
    return aggregate;
  }

  async close(): Promise<void> {
    await Promise.all([this.#sessions.closeAll(), this.#stateless.closeAll()]);
  }
}

function idOf(body: unknown): JsonRpcId {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** Tells a 2025-era client that listings changed (on its GET stream); a closed session hears nothing. */
async function notifySession(server: Server | undefined, surfaces: readonly ListedSurface[]): Promise<void> {
  if (server === undefined) return;
  try {
    for (const surface of surfaces) {
      if (surface === 'tools') await server.sendToolListChanged();
      else if (surface === 'prompts') await server.sendPromptListChanged();
      else await server.sendResourceListChanged();
    }
  } catch {
    // Not connected yet, or gone: the client lists again when it next asks.
  }
}

/** A 2025-era aggregate session: its SDK server and its members; ended by DELETE, idleness or shutdown. */
class AggregateSession implements EndableSession {
  onclose?: ((endedBy: BridgeEnd) => void) | undefined;
  readonly #members: AggregateMembers;
  readonly #server: Server;
  readonly #logger: GatewayLogger;
  readonly #id: string;
  #closing: Promise<void> | undefined;

  constructor(members: AggregateMembers, server: Server, logger: GatewayLogger, id: string) {
    this.#members = members;
    this.#server = server;
    this.#logger = logger;
    this.#id = id;
  }

  close(endedBy: BridgeEnd = 'gateway'): Promise<void> {
    this.#closing ??= (async () => {
      this.onclose?.(endedBy);
      this.#logger.info({ event: 'session.ended', server: AGGREGATE }, `the ${endedBy} closed the session`);
      await this.#server.close().catch(() => undefined);
      await this.#members.close();
    })().catch((error: unknown) =>
      this.#logger.error({ event: 'session.failed', server: AGGREGATE, err: errorSummary(error) }, this.#id),
    );
    return this.#closing;
  }
}

/** One credential's 2026-07-28 aggregate: its members, and the SDK's handler in front of them. */
class StatelessAggregate implements EndableSession {
  onclose?: ((endedBy: BridgeEnd) => void) | undefined;
  readonly #scope: Scope;
  readonly #handler: McpHttpHandler;
  readonly #serve: NodeMcpRequestHandler;
  #closing: Promise<void> | undefined;

  constructor(scope: Scope, options: AggregateRouteOptions, namespace: () => AggregateNamespace) {
    this.#scope = scope;
    const { logger, timeoutMs } = options;
    this.#handler = createMcpHandler(
      () =>
        createAggregateServer({
          namespace,
          members: scope.members,
          instructions: scope.instructions(),
          timeoutMs,
          logger,
        }),
      {
        legacy: 'reject',
        onerror: (error) =>
          logger.debug({ event: 'stateless.handler_error', server: AGGREGATE }, errorSummary(error)),
      },
    );
    this.#serve = toNodeHandler(this.#handler, {
      onerror: (error) =>
        logger.warn({ event: 'stateless.adapter_error', server: AGGREGATE }, errorSummary(error)),
    });
  }

  serve(req: Request, res: ServerResponse, body: unknown): Promise<void> {
    return this.#serve(req, res, body);
  }

  /** A member's listing changed: the credential's listen streams hear of it. */
  notify(surfaces: readonly ListedSurface[]): void {
    for (const surface of surfaces) {
      if (surface === 'tools') this.#handler.notify.toolsChanged();
      else if (surface === 'prompts') this.#handler.notify.promptsChanged();
      else this.#handler.notify.resourcesChanged();
    }
  }

  close(endedBy: BridgeEnd = 'gateway'): Promise<void> {
    this.#closing ??= (async () => {
      this.onclose?.(endedBy);
      await this.#scope.members.close();
      await this.#handler.close().catch(() => undefined);
    })();
    return this.#closing;
  }
}
