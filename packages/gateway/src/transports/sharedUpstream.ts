import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  McpError,
  type ClientCapabilities,
  type Implementation,
  type JSONRPCMessage,
  type Progress,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import type { UpstreamConnection } from './openUpstream.js';
import { describeUpstreamEnd } from './describeUpstreamEnd.js';
import type { InvalidUpstreamMessage } from '../wire/upstreamMessage.js';
import { CheckedUpstreamTransport } from './checkedUpstreamTransport.js';
import { CLIENT_INFO, DEFAULT_STREAM_IDLE_MS } from '../defaults.js';
import { LiveList, type ListMember } from '../state/liveList.js';

/** Any result, kept as the upstream sent it: no SDK schema may drop or coerce a member. */
const rawResult = z.looseObject({});

/** The envelope members of a 2026-07-28 request; a 2025-era upstream was initialized instead. */
const ENVELOPE_PREFIX = 'io.modelcontextprotocol/';

/** Longest a forwarded request may wait (setTimeout's bound): in practice, as long as the client does. */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

/** How long the upstream may stay silent while it owes answers, unless told (limits.streamIdleMs). */

/** Options of {@link SharedUpstream.open}. */
export interface SharedUpstreamOptions {
  /** The upstream transport, not yet started (see openUpstream). */
  readonly connection: UpstreamConnection;
  /** Bound on the initialize handshake. */
  readonly timeoutMs: number;
  /**
   * Client capabilities declared at initialize: the pin's `clientCapabilities`, so that a server
   * listing tools per capability lists what was pinned. @default {}
   */
  readonly capabilities?: Readonly<Record<string, unknown>>;
  /**
   * Silence allowed from the upstream while requests are in flight (limits.streamIdleMs): past it,
   * each request in flight for that long rejects with GW_UPSTREAM_UNREACHABLE, `data.reason`
   * `timeout`. Any upstream message (a progress notification too) restarts the clock. @default 300000
   */
  readonly streamIdleMs?: number;
  /** Receives every notification the upstream sends (list_changed, resource updates, logs). */
  readonly onNotification: (method: string, params: Record<string, unknown> | undefined) => void;
  /**
   * Receives transport errors that do not end the connection, and the upstream's silence when it
   * timed requests out (a GatewayError with `data.reason` `timeout` and `data.requests`).
   */
  readonly onError: (error: Error) => void;
  /** Names the server in the -32042 errors of invalid upstream answers. */
  readonly server: string;
  /** Receives each upstream message dropped as invalid (its request, if any, fails with -32042). */
  readonly onInvalid: (invalid: InvalidUpstreamMessage) => void;
}

/** How a forwarded request is tied to the client request it serves. */
export interface ForwardOptions {
  /** Aborted when the client goes away: the upstream gets notifications/cancelled. */
  readonly signal?: AbortSignal;
  /**
   * Bound on the request (the gateway's own listings); by default none but the upstream's silence
   * (see SharedUpstreamOptions.streamIdleMs), as long as the client waits.
   */
  readonly timeoutMs?: number;
  /** Receives the upstream's progress; given only when the client asked for progress. */
  readonly onprogress?: (progress: Progress) => void;
}

/**
 * The request parameters as the upstream gets them: without the 2026-07-28 envelope, and with the
 * gateway's own progress token in place of the client's (tokens of several clients could collide).
 */
function upstreamParams(
  params: Record<string, unknown> | undefined,
  progressToken: string | undefined,
): Record<string, unknown> | undefined {
  const meta = params?._meta;
  const kept =
    typeof meta === 'object' && meta !== null
      ? Object.entries(meta).filter(([key]) => !key.startsWith(ENVELOPE_PREFIX) && key !== 'progressToken')
      : [];
  if (progressToken !== undefined) kept.push(['progressToken', progressToken]);
  if (params === undefined) return kept.length === 0 ? undefined : { _meta: Object.fromEntries(kept) };
  const { _meta: _dropped, ...rest } = params;
  return kept.length === 0 ? rest : { ...rest, _meta: Object.fromEntries(kept) };
}

/** The token and values of a progress notification, or undefined for any other message. */
function progressOf(message: JSONRPCMessage): { token: unknown; progress: Progress } | undefined {
  if (!('method' in message) || message.method !== 'notifications/progress' || 'id' in message)
    return undefined;
  const { progressToken, ...progress } = (message.params ?? {}) as Record<string, unknown>;
  return typeof progress.progress === 'number'
    ? { token: progressToken, progress: progress as Progress }
    : undefined;
}

/** A forwarded request waiting for its answer. */
interface Waiting extends ListMember<Waiting> {
  /** When it was sent (Date.now()): its silence clock starts no earlier. */
  readonly sentAt: number;
  /** Ends the request with the upstream's silence as the reason. */
  readonly timeOut: (reason: GatewayError) => void;
}

/**
 * One upstream connection (a stdio child, or a 2024-11-05 HTTP+SSE session) that the gateway
 * initializes itself as a 2025-era client and shares among the stateless (2026-07-28) requests of
 * one credential. The SDK client gives each forwarded request its own id and progress token, so
 * concurrent requests cannot collide; the caller maps progress back to the client's token.
 */
export class SharedUpstream {
  /** Called once when the upstream connection ends (a child exited, a stream broke, close()). */
  onclose?: () => void;

  readonly #client: Client;
  readonly #connection: UpstreamConnection;
  /** The upstream transport as the SDK client sees it: every message checked first. */
  readonly #checked: CheckedUpstreamTransport;
  readonly #progress = new Map<string, (progress: Progress) => void>();
  readonly #idleMs: number;
  readonly #onError: (error: Error) => void;
  /** The requests awaiting their answer (a LiveList: one comes and goes with every request). */
  readonly #waiting = new LiveList<Waiting>();
  /** When the upstream last sent anything (Date.now()). */
  #heardAt = 0;
  /** Fires when the oldest request waiting may have waited out the upstream's silence. */
  #silence: NodeJS.Timeout | undefined;
  #closed = false;
  /** True when the gateway closed the connection (shutdown, idleness), not the upstream. */
  #closedByGateway = false;

  private constructor(
    client: Client,
    connection: UpstreamConnection,
    checked: CheckedUpstreamTransport,
    idleMs: number,
    onError: (error: Error) => void,
  ) {
    this.#client = client;
    this.#connection = connection;
    this.#checked = checked;
    this.#idleMs = idleMs;
    this.#onError = onError;
  }

  /** Starts the upstream and performs the initialize handshake; rejects (and cleans up) if either fails. */
  static async open(options: SharedUpstreamOptions): Promise<SharedUpstream> {
    // Only the capabilities the pin was listed with: the listing is the one approved. The gateway
    // answers no server request itself, so a tool that does ask (sampling, elicitation) mid-call
    // gets the SDK client's error; without them, the tools gated on them would not be listed at all.
    const client = new Client(
      { ...CLIENT_INFO },
      { capabilities: { ...(options.capabilities ?? {}) } as ClientCapabilities },
    );
    const checked = new CheckedUpstreamTransport(
      options.connection.transport,
      options.server,
      options.onInvalid,
    );
    const shared = new SharedUpstream(
      client,
      options.connection,
      checked,
      options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS,
      options.onError,
    );
    client.fallbackNotificationHandler = async (notification) => {
      options.onNotification(notification.method, notification.params);
    };
    client.onerror = (error) => {
      options.onError(error);
      // The upstream is gone (its stream broke): ended by the upstream, not by the gateway.
      if (options.connection.isFatal(error)) void shared.#shutdown();
    };
    client.onclose = () => shared.#ended();
    try {
      await client.connect(checked, { timeout: options.timeoutMs });
    } catch (error) {
      await shared.close();
      throw error;
    }
    // The upstream may have gone between its initialize answer and here: a dead upstream is no upstream.
    if (shared.#closed) throw new GatewayError('GW_UPSTREAM_EXITED', shared.endReason());
    shared.#takeProgress();
    return shared;
  }

  /**
   * Progress is dispatched here, as it arrives, instead of by the SDK client: the client hands
   * notifications on a microtask later than responses, so the last progress of a call read in
   * one chunk with its result would be lost.
   */
  #takeProgress(): void {
    const transport = this.#checked;
    const dispatch = transport.onmessage;
    transport.onmessage = (message, extra) => {
      this.#heardAt = Date.now();
      const update = progressOf(message);
      const listener = typeof update?.token === 'string' ? this.#progress.get(update.token) : undefined;
      if (update !== undefined && listener !== undefined) listener(update.progress);
      else dispatch?.call(transport, message, extra);
    };
  }

  /** The upstream's name and version, as it said at initialize. */
  get serverInfo(): Implementation | undefined {
    return this.#client.getServerVersion();
  }

  /** The upstream's capabilities, as it said at initialize. */
  get capabilities(): ServerCapabilities | undefined {
    return this.#client.getServerCapabilities();
  }

  /** The upstream's instructions, if any. */
  get instructions(): string | undefined {
    return this.#client.getInstructions();
  }

  /** True once the connection has ended. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The `Mcp-Session-Id` the upstream issued to the gateway's client (Streamable HTTP), if any. */
  get sessionId(): string | undefined {
    return this.#checked.sessionId;
  }

  /**
   * Forwards one request and resolves with the upstream's result, untouched. Rejects with the
   * upstream's JSON-RPC error (an McpError) or, when the connection ends first, a GatewayError
   * GW_UPSTREAM_EXITED saying how.
   */
  async request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: ForwardOptions = {},
  ): Promise<Record<string, unknown>> {
    const token = options.onprogress === undefined ? undefined : `toolpin-${randomUUID()}`;
    if (token !== undefined && options.onprogress !== undefined)
      this.#progress.set(token, options.onprogress);
    const forwarded = upstreamParams(params, token);
    // The client's signal is followed only while the request is open: the SDK server aborts it when
    // the exchange ends, and the SDK client would then cancel a request already answered.
    const abort = new AbortController();
    const follow = (): void => abort.abort(options.signal?.reason);
    if (options.signal?.aborted === true) follow();
    else options.signal?.addEventListener('abort', follow, { once: true });
    // The SDK client answers an abort with notifications/cancelled upstream, and rejects.
    let timedOut: GatewayError | undefined;
    const waiting: Waiting = {
      listPrev: null,
      listNext: null,
      listed: false,
      sentAt: Date.now(),
      timeOut: (reason) => {
        timedOut = reason;
        abort.abort(reason);
      },
    };
    this.#waiting.add(waiting);
    this.#watchSilence();
    try {
      return await this.#client.request(
        forwarded === undefined ? { method } : { method, params: forwarded },
        rawResult,
        { timeout: options.timeoutMs ?? NO_TIMEOUT_MS, signal: abort.signal },
      );
    } catch (error) {
      if (this.#closed) throw new GatewayError('GW_UPSTREAM_EXITED', this.endReason(), { method });
      if (timedOut !== undefined) throw timedOut;
      if (error instanceof McpError || abort.signal.aborted) throw error;
      // A result that is not an object fails the SDK client's schema: the upstream answered, wrongly.
      const invalid = (error as { name?: unknown }).name === 'ZodError';
      throw new GatewayError(
        invalid ? 'GW_UPSTREAM_INVALID' : 'GW_UPSTREAM_UNREACHABLE',
        invalid ? `the upstream's answer to ${method} is not a result object` : (error as Error).message,
        { method },
        { cause: error },
      );
    } finally {
      this.#waiting.remove(waiting);
      options.signal?.removeEventListener('abort', follow);
      if (token !== undefined) this.#progress.delete(token);
    }
  }

  /**
   * Arms the silence clock while requests wait, for the earliest moment one of them may have
   * waited `streamIdleMs` with nothing from the upstream; re-armed when it fires (the HTTP proxy's
   * rule for an answer still owed, docs/boundary.md "Timeouts").
   */
  #watchSilence(): void {
    if (this.#silence !== undefined || this.#waiting.size === 0 || this.#closed) return;
    let oldest = Infinity;
    for (const waiting of this.#waiting.toArray()) oldest = Math.min(oldest, waiting.sentAt);
    const due = Math.max(oldest, this.#heardAt) + this.#idleMs;
    this.#silence = setTimeout(
      () => {
        this.#silence = undefined;
        const now = Date.now();
        const message = `the upstream sent nothing for ${this.#idleMs} ms`;
        let count = 0;
        for (const waiting of this.#waiting.toArray()) {
          if (!waiting.listed || Math.max(waiting.sentAt, this.#heardAt) + this.#idleMs > now) continue;
          this.#waiting.remove(waiting);
          count += 1;
          waiting.timeOut(new GatewayError('GW_UPSTREAM_UNREACHABLE', message, { reason: 'timeout' }));
        }
        if (count > 0)
          this.#onError(
            new GatewayError('GW_UPSTREAM_UNREACHABLE', `${message}: ${count} request(s) timed out`, {
              reason: 'timeout',
              requests: count,
            }),
          );
        this.#watchSilence();
      },
      Math.max(0, due - Date.now()),
    );
    this.#silence.unref();
  }

  /** Why the connection ended: the gateway closing it, the child's exit, or the connection closing. */
  endReason(): string {
    return describeUpstreamEnd(this.#closedByGateway ? 'gateway' : 'upstream', this.#connection.transport);
  }

  /** Ends the connection (a child is stopped with its process group). */
  async close(): Promise<void> {
    if (!this.#closed) this.#closedByGateway = true;
    await this.#shutdown();
  }

  async #shutdown(): Promise<void> {
    await this.#client.close().catch(() => undefined);
    this.#ended();
  }

  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#silence);
    this.onclose?.();
  }
}
