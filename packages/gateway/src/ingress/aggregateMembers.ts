import { randomUUID } from 'node:crypto';
import type { ProtocolError, JSONRPCRequest } from '@modelcontextprotocol/server';
import { screenCall } from '../checkpoint/screenCall.js';
import type { ServerCheckpoint } from '../checkpoint/serverCheckpoint.js';
import type { GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import type { SharedUpstream } from '../transports/sharedUpstream.js';
import { surfacesChangedBy, type ListedSurface } from '../policy/pinSurface.js';
import { AGGREGATE_MEMBER_RETRY_MS } from '../defaults.js';
import { Forwarder, refusalError } from './forwardingServer.js';
import { openSharedUpstream } from './statelessSession.js';

/** Options of {@link AggregateMembers}. */
export interface AggregateMembersOptions {
  /** Whose members these are (an aggregate session, or a credential's 2026-07-28 clients): labels their keys. */
  readonly scope: string;
  /** The live checkpoint of a server, or undefined when it is not routed (removed by a reload). */
  readonly checkpointOf: (server: string) => ServerCheckpoint | undefined;
  readonly logger: GatewayLogger;
  /** Bound on starting a member (its initialize) and on each listing the gateway sends itself. */
  readonly timeoutMs: number;
  /** Silence allowed from a member while it owes answers (limits.streamIdleMs). */
  readonly streamIdleMs?: number;
  /** stdio: how long a child gets to exit on its own when it is stopped. */
  readonly graceMs?: number;
  /** A member's listing of these surfaces changed (list_changed, or the member went down or came up). */
  readonly onChange: (surfaces: readonly ListedSurface[]) => void;
  /** A member upstream issued this session id to the gateway's own client (no client's session). */
  readonly onUpstreamSession?: (server: string, sessionId: string) => void;
}

/** One member's upstream for this scope: what its requests go through. */
export interface MemberLink {
  readonly server: string;
  readonly checkpoint: ServerCheckpoint;
  /** The key of this upstream's catalogs in the member's checkpoint: its own, never a predecessor's. */
  readonly sessionKey: string;
  readonly upstream: SharedUpstream;
  /** Screens, sends and judges through the member's checkpoint, as its own bridged route does. */
  readonly forwarder: Forwarder;
}

const EVERY_SURFACE: readonly ListedSurface[] = ['tools', 'prompts', 'resourceTemplates'];

/**
 * The member upstreams of one aggregate scope, each opened by the gateway's own client (as the
 * 2026-07-28 clients' shared upstream of a bridged route) and judged by its server's checkpoint
 * under a session key of its own. A member that cannot be started, or whose upstream ends, is down:
 * its items leave the listings and its requests are refused naming it; it is tried again on the
 * next request that needs it, no sooner than AGGREGATE_MEMBER_RETRY_MS after a failed start. A
 * member never holds up another: each is opened and closed on its own.
 */
export class AggregateMembers {
  readonly #options: AggregateMembersOptions;
  readonly #links = new Map<string, MemberLink>();
  readonly #opening = new Map<string, Promise<MemberLink | undefined>>();
  readonly #failedAt = new Map<string, number>();
  #closed = false;

  constructor(options: AggregateMembersOptions) {
    this.#options = options;
  }

  /** The member's live upstream, opened now if it has none; undefined when the member is down. */
  link(server: string): Promise<MemberLink | undefined> {
    const checkpoint = this.#options.checkpointOf(server);
    const live = this.#links.get(server);
    if (live !== undefined && live.checkpoint === checkpoint && !live.upstream.closed)
      return Promise.resolve(live);
    // The server's route was rebuilt (a re-pointed upstream) or removed: this upstream is not its.
    if (live !== undefined) void this.#drop(live);
    if (checkpoint === undefined || this.#closed) return Promise.resolve(undefined);
    // A member the scope's principal has no scope on is never opened (no child started for it).
    if (!checkpoint.seesServer(this.#options.scope)) return Promise.resolve(undefined);
    const pending = this.#opening.get(server);
    if (pending !== undefined) return pending;
    const failed = this.#failedAt.get(server);
    if (failed !== undefined && Date.now() - failed < AGGREGATE_MEMBER_RETRY_MS)
      return Promise.resolve(undefined);
    const opening = this.#open(server, checkpoint);
    this.#opening.set(server, opening);
    const forget = (): void => void this.#opening.delete(server);
    opening.then(forget, forget);
    return opening;
  }

  /**
   * The refusal of a request naming an item of a member the scope's principal has no scope on (one
   * {@link link} never opens): decided by the member's checkpoint as every use of an item is
   * (`not_in_scope`, alerted), with nothing sent; undefined when the principal has a scope on it.
   */
  async refusalOutOfScope(server: string, request: JSONRPCRequest): Promise<ProtocolError | undefined> {
    const checkpoint = this.#options.checkpointOf(server);
    const { scope } = this.#options;
    if (checkpoint === undefined || checkpoint.seesServer(scope)) return undefined;
    // Nothing of the member is listed for it: a request the scope cannot decide at once is refused.
    const refusal = await screenCall(
      checkpoint,
      scope,
      request.id,
      request.params,
      () => Promise.reject(new Error('the member is out of the principal’s scope: not opened')),
      request.method,
    );
    return refusal === undefined ? undefined : refusalError(refusal);
  }

  /** The live upstream of each member that is up now (no member is started). */
  live(): ReadonlyMap<string, MemberLink> {
    return this.#links;
  }

  async #open(server: string, checkpoint: ServerCheckpoint): Promise<MemberLink | undefined> {
    const options = this.#options;
    const sessionKey = `${options.scope}:member:${randomUUID()}`;
    let upstream: SharedUpstream;
    try {
      upstream = await openSharedUpstream(
        {
          checkpoint,
          logger: options.logger,
          // No credential of the client reaches a member: one member's token is not another's.
          headers: {},
          timeoutMs: options.timeoutMs,
          ...(options.streamIdleMs === undefined ? {} : { streamIdleMs: options.streamIdleMs }),
          ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
        },
        sessionKey,
        (method) => this.#fromMember(server, method),
      );
    } catch {
      this.#failedAt.set(server, Date.now());
      return undefined;
    }
    const { timeoutMs } = options;
    const link: MemberLink = {
      server,
      checkpoint,
      sessionKey,
      upstream,
      forwarder: new Forwarder({ checkpoint, sessionKey, upstream, timeoutMs }),
    };
    this.#failedAt.delete(server);
    if (upstream.sessionId !== undefined) options.onUpstreamSession?.(server, upstream.sessionId);
    if (this.#closed) {
      await upstream.close();
      return undefined;
    }
    this.#links.set(server, link);
    upstream.onclose = () => void this.#drop(link);
    this.#log('info', 'aggregate.member_up', link, 'member upstream opened');
    return link;
  }

  /** A member's notification: a list_changed marks its catalog stale in its checkpoint, then reaches the client. */
  #fromMember(server: string, method: string): void {
    const link = this.#links.get(server);
    const surfaces = surfacesChangedBy(method);
    if (link === undefined || surfaces.length === 0) return;
    link.checkpoint.inspectUpstreamMessage(link.sessionKey, { jsonrpc: '2.0', method });
    this.#options.onChange(surfaces);
  }

  /** Forgets a member's upstream (ended, or no longer its server's): its items leave the listings. */
  async #drop(link: MemberLink): Promise<void> {
    if (this.#links.get(link.server) !== link) return;
    this.#links.delete(link.server);
    this.#log(this.#closed ? 'info' : 'warn', 'aggregate.member_down', link, link.upstream.endReason());
    await link.upstream.close();
    link.checkpoint.forgetSession(link.sessionKey);
    if (!this.#closed) this.#options.onChange(EVERY_SURFACE);
  }

  /** Closes every member upstream (stdio children are stopped). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#opening.values()]);
    await Promise.all([...this.#links.values()].map((link) => this.#drop(link)));
  }

  #log(level: 'info' | 'warn', event: string, link: MemberLink, message: string): void {
    this.#options.logger[level](
      { event, server: link.server, session: sessionLabel(link.sessionKey) },
      message,
    );
  }
}
