import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { toNodeHandler, toWebRequest, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, isLegacyRequest, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { Request } from 'express';
import { GatewayError } from '../errors.js';
import type { ServerCheckpoint } from '../checkpoint/serverCheckpoint.js';
import type { GatewayLogger } from '../observe/logger.js';
import { errorSummary } from '../observe/errorSummary.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import type { BridgeEnd } from '../transports/messageBridge.js';
import { SharedUpstream } from '../transports/sharedUpstream.js';
import { logInvalidMessage } from '../observe/invalidMessage.js';
import { createForwardingServer } from './forwardingServer.js';
import { statedArtifactRefusal } from '../checkpoint/statedArtifactCheck.js';
import { openSessionUpstream } from './openBridge.js';
import { settleWithin } from '../transports/settleWithin.js';
import { CLIENT_FLUSH_MS } from '../defaults.js';
import { LiveList, type ListMember } from '../state/liveList.js';

/** Options of {@link StatelessSession.open}. */
export interface StatelessSessionOptions {
  readonly checkpoint: ServerCheckpoint;
  readonly logger: GatewayLogger;
  /** The credential whose requests share this upstream (hashed, see credentialOf). */
  readonly credential: string;
  /** Client credentials an HTTP upstream gets too. */
  readonly headers: Readonly<Record<string, string>>;
  /** Bound on the initialize handshake and on each tools/list the gateway sends itself. */
  readonly timeoutMs: number;
  /** Silence allowed from the upstream while it owes answers (limits.streamIdleMs). @default 300000 */
  readonly streamIdleMs?: number;
  /** stdio: how long a child gets to exit on its own when the session ends. */
  readonly graceMs?: number;
}

/** Logs a failure the shared upstream reported (it closes itself, and with it the session, when fatal). */
function logUpstreamError(
  logger: GatewayLogger,
  fields: { readonly server: string; readonly session: string },
  error: Error,
): void {
  // A handler failed on an upstream message: the upstream is closed, and with it the session.
  if (error instanceof GatewayError && error.code === 'GW_SESSION_FAILED')
    logger.error({ event: 'session.failed', ...fields }, errorSummary(error));
  else if (error instanceof GatewayError && error.data.reason === 'timeout')
    logger.warn({ event: 'upstream.timeout', ...fields, requests: error.data.requests }, error.message);
  else logger.warn({ event: 'upstream.error', ...fields }, errorSummary(error));
}

/**
 * Starts a server's upstream for the gateway's own client (one credential's 2026-07-28 clients, or
 * one member of an aggregate) and initializes it; its notifications go to `deliver`, its failures
 * are logged under `sessionKey`. Rejects, after logging why, when it cannot be started.
 */
export async function openSharedUpstream(
  options: Pick<
    StatelessSessionOptions,
    'checkpoint' | 'logger' | 'headers' | 'timeoutMs' | 'streamIdleMs' | 'graceMs'
  >,
  sessionKey: string,
  deliver: (method: string, params: Record<string, unknown> | undefined) => void,
): Promise<SharedUpstream> {
  const { logger } = options;
  const config = options.checkpoint.config;
  const fields = { server: config.name, session: sessionLabel(sessionKey) };
  try {
    const upstream = await SharedUpstream.open({
      connection: openSessionUpstream(options, sessionKey, options.headers),
      timeoutMs: options.timeoutMs,
      ...(config.clientCapabilities === undefined ? {} : { capabilities: config.clientCapabilities }),
      ...(options.streamIdleMs === undefined ? {} : { streamIdleMs: options.streamIdleMs }),
      onNotification: deliver,
      onError: (error) => logUpstreamError(logger, fields, error),
      server: config.name,
      onInvalid: (invalid) => logInvalidMessage(logger, fields, invalid, invalid.id !== undefined),
    });
    // Its initialize answer is judged as every initialize answer the checkpoint sees: its serverInfo.
    const refused = options.checkpoint.refusesOwnUpstream(sessionKey, upstream.serverInfo);
    if (refused === undefined) return upstream;
    await upstream.close();
    options.checkpoint.forgetSession(sessionKey);
    const { message, data } = statedArtifactRefusal(refused, config);
    throw new GatewayError('GW_ARTIFACT_DRIFTED', message, data);
  } catch (error) {
    logger.error(
      { event: 'upstream.start_failed', ...fields, err: errorSummary(error) },
      'upstream could not be started',
    );
    throw error;
  }
}

/** The v2 SDK's classification of a request without a session: true when it is not 2026-07-28 traffic. */
export async function isLegacyHttpRequest(req: Request, body: unknown): Promise<boolean> {
  return isLegacyRequest(await toWebRequest(req, body), body);
}

/** A request being answered, linked into its session's list. */
interface Answering extends ListMember<Answering> {
  readonly serving: Promise<void>;
}

/**
 * The upstream of one credential's 2026-07-28 clients on a bridged route: a child (or a legacy
 * HTTP+SSE session) the gateway initialized itself, kept warm across requests, and the SDK's
 * 2026-07-28 handler in front of it (discover, per-request envelope, subscriptions/listen). The
 * upstream's list_changed notifications reach this credential's listen streams, and the checkpoint.
 */
export class StatelessSession {
  /** Called once when the session ends, with the side that ended it. */
  onclose?: (endedBy: BridgeEnd) => void;

  readonly #options: StatelessSessionOptions;
  /** The key of this upstream's catalog: its own, so a successor never inherits what it observed. */
  readonly #sessionKey: string;
  readonly #upstream: SharedUpstream;
  readonly #handler: McpHttpHandler;
  readonly #serve: NodeMcpRequestHandler;
  /**
   * Requests being answered, listen streams aside: they get their answer before the handler closes
   * (a LiveList: one comes and goes with every request, see state/liveList.ts).
   */
  readonly #answering = new LiveList<Answering>();
  #closing: Promise<void> | undefined;

  private constructor(options: StatelessSessionOptions, sessionKey: string, upstream: SharedUpstream) {
    this.#options = options;
    this.#sessionKey = sessionKey;
    this.#upstream = upstream;
    const { checkpoint, timeoutMs } = options;
    this.#handler = createMcpHandler(
      () => createForwardingServer({ checkpoint, sessionKey, upstream, timeoutMs }),
      {
        legacy: 'reject',
        onerror: (error) => this.#log('debug', 'stateless.handler_error', errorSummary(error)),
      },
    );
    this.#serve = toNodeHandler(this.#handler, {
      onerror: (error) => this.#log('warn', 'stateless.adapter_error', errorSummary(error)),
    });
    upstream.onclose = () => void this.#end('upstream');
  }

  /** Starts the upstream and initializes it; rejects, after logging why, when it cannot be started. */
  static async open(options: StatelessSessionOptions): Promise<StatelessSession> {
    const sessionKey = `${options.credential}:upstream:${randomUUID()}`;
    // A notification sent before initialize completes has no listener yet to reach.
    let deliver: (method: string, params: Record<string, unknown> | undefined) => void = () => undefined;
    const upstream = await openSharedUpstream(options, sessionKey, (method, params) =>
      deliver(method, params),
    );
    const session = new StatelessSession(options, sessionKey, upstream);
    deliver = (method, params) => session.#fromUpstream(method, params);
    options.logger.info(
      {
        event: 'session.opened',
        server: options.checkpoint.config.name,
        session: sessionLabel(sessionKey),
        era: '2026-07-28',
      },
      'stateless upstream opened',
    );
    return session;
  }

  /** Serves one HTTP request of the credential (its body already parsed). */
  async serve(req: Request, res: ServerResponse, body: unknown): Promise<void> {
    const serving = this.#serve(req, res, body);
    if ((body as { method?: unknown } | undefined)?.method === 'subscriptions/listen') return serving;
    const answering: Answering = { listPrev: null, listNext: null, listed: false, serving };
    this.#answering.add(answering);
    try {
      await serving;
    } finally {
      this.#answering.remove(answering);
    }
  }

  /** Ends the session: open requests are aborted and the upstream is closed (a child is stopped). */
  close(endedBy: BridgeEnd = 'gateway'): Promise<void> {
    return this.#end(endedBy);
  }

  /** Change notifications go to the credential's listen streams; the checkpoint learns its catalog is stale. */
  #fromUpstream(method: string, params: Record<string, unknown> | undefined): void {
    const notify = this.#handler.notify;
    // A list_changed makes the checkpoint's catalog of that surface stale before the client hears of it.
    if (method.endsWith('/list_changed'))
      this.#options.checkpoint.inspectUpstreamMessage(this.#sessionKey, { jsonrpc: '2.0', method });
    if (method === 'notifications/tools/list_changed') notify.toolsChanged();
    else if (method === 'notifications/prompts/list_changed') notify.promptsChanged();
    else if (method === 'notifications/resources/list_changed') notify.resourcesChanged();
    else if (method === 'notifications/resources/updated' && typeof params?.uri === 'string')
      notify.resourceUpdated(params.uri);
    // Log messages and the like have no request to ride on; their content stays out of our logs.
    else this.#log('debug', 'upstream.notification_dropped', method);
  }

  #end(by: BridgeEnd): Promise<void> {
    // A failing shutdown is logged, never left to reach the event loop as an unhandled rejection.
    this.#closing ??= Promise.resolve()
      .then(async () => {
        // Out of the registry first: the credential's next request opens a new upstream.
        this.onclose?.(by);
        const reason = by === 'upstream' ? this.#upstream.endReason() : `the ${by} closed the session`;
        this.#log(by === 'upstream' ? 'warn' : 'info', 'session.ended', reason);
        await this.#upstream.close();
        // The requests the upstream left unanswered are failing with -32041 now: let those answers out.
        const answering = this.#answering.toArray().map((request) => request.serving);
        await settleWithin(Promise.allSettled(answering), CLIENT_FLUSH_MS);
        await this.#handler.close().catch(() => undefined);
        this.#options.checkpoint.forgetSession(this.#sessionKey);
      })
      .catch((error: unknown) => this.#log('error', 'session.failed', errorSummary(error)));
    return this.#closing;
  }

  #log(level: 'debug' | 'info' | 'warn' | 'error', event: string, message: string): void {
    const { checkpoint, logger } = this.#options;
    logger[level](
      { event, server: checkpoint.config.name, session: sessionLabel(this.#sessionKey) },
      message,
    );
  }
}
