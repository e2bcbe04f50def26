import { randomUUID } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../errors.js';
import { isScreened, screenCall } from '../checkpoint/screenCall.js';
import { DROPPED, type ServerCheckpoint } from '../checkpoint/serverCheckpoint.js';
import type { ClientNotices } from '../observe/clientNotices.js';
import { errorSummary } from '../observe/errorSummary.js';
import type { GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import {
  endRequest,
  traceContextOfMeta,
  traceRequest,
  withTrace,
  type TracedFront,
  type TracedRequest,
} from '../observe/tracing.js';
import { collectToolPages, type FetchedPage } from '../state/collectToolPages.js';
import type { DenyData } from '../policy/decision.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { isObject } from '../wire/isObject.js';
import { jsonValueProblem, MAX_JSON_DEPTH } from '../wire/jsonDepth.js';
import { listingMeta } from '../wire/mcpEra.js';
import type { SurfaceListing } from '../wire/listedSurfaces.js';
import {
  idKey,
  isRequest,
  isRequestWithoutId,
  isResponse,
  jsonRpcError,
  outOfRangeRefusal,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../wire/jsonRpc.js';
import { upstreamFailureOf } from './exchange.js';
import type { PeerReading, UpstreamConnection } from './openUpstream.js';
import { PendingReplies } from './pendingReplies.js';
import { describeUpstreamEnd } from './describeUpstreamEnd.js';
import { settleWithin } from './settleWithin.js';
import { logInvalidMessage } from '../observe/invalidMessage.js';
import {
  checkUpstreamMessage,
  upstreamBatch,
  unverifiableAnswer,
  type InvalidUpstreamMessage,
} from '../wire/upstreamMessage.js';
import {
  CLIENT_FLUSH_MS,
  CLIENT_OWN_ANSWERS_HIGH_BYTES,
  CLIENT_OWN_ANSWERS_LOW_BYTES,
  CLIENT_QUEUE_HIGH_MESSAGES,
  CLIENT_QUEUE_LOW_MESSAGES,
  DEFAULT_CLIENT_QUEUE_HIGH_BYTES,
  DEFAULT_CLIENT_QUEUE_LOW_BYTES,
  DEFAULT_MAX_PAGES,
  DEFAULT_STREAM_IDLE_MS,
} from '../defaults.js';

/** How long the upstream may stay silent while it owes answers, unless told (limits.streamIdleMs). */

/** Ids of requests answered with a timeout, whose late answers are dropped: at most this many. */
const MAX_TIMED_OUT = 1024;

/** Options of {@link MessageBridge}. */
export interface MessageBridgeOptions {
  readonly checkpoint: ServerCheckpoint;
  /** Whose catalog this connection acts on. */
  readonly sessionKey: string;
  /** The client-facing transport (Streamable HTTP server, stdio server, HTTP+SSE server). */
  readonly client: Transport;
  /** Which front `client` is (`toolpin.front` of the request spans). @default 'stdio' */
  readonly front?: TracedFront;
  /** The upstream-facing transport (stdio child, Streamable HTTP client, HTTP+SSE client). */
  readonly upstream: UpstreamConnection;
  readonly logger: GatewayLogger;
  /** Bound on each tools/list page the gateway asks for itself (fetch on miss). */
  readonly timeoutMs: number;
  /**
   * Silence allowed from the upstream while client requests are in flight (limits.streamIdleMs):
   * past it, each request in flight for that long gets -32041 `timeout`. Any upstream message
   * (a progress notification too) restarts the clock. @default 300000
   */
  readonly streamIdleMs?: number;
  /** @default 1000 */
  readonly maxPages?: number;
  /**
   * Tell the client about hidden tools and refused calls (`notifications/message`): the bridge
   * declares `logging` in the initialize result it relays, and answers `logging/setLevel` itself
   * when the upstream does not declare it. Absent: nothing is added.
   */
  readonly notices?: ClientNotices;
  /**
   * The client transport as a pipe (wrap: its writes wait for the client to read): the bridge
   * serializes each message itself, once, hands the text over, and counts what waits for the client
   * by its length. Past CLIENT_QUEUE_HIGH_MESSAGES or DEFAULT_CLIENT_QUEUE_HIGH_BYTES waiting, the
   * upstream is not read (`upstream.reading`) until the queue is under the low marks, its silence
   * meanwhile not counted against it; past CLIENT_OWN_ANSWERS_HIGH_BYTES of the gateway's own
   * answers waiting, the client is not read until they are under CLIENT_OWN_ANSWERS_LOW_BYTES.
   * Absent: messages go through `client.send`, and nothing is held back.
   */
  readonly clientPipe?: ClientPipe;
}

/** A client transport that is a pipe: it takes serialized messages and can stop being read. */
export interface ClientPipe extends PeerReading {
  /** Writes one serialized message; resolves once the output took it (the client read enough). */
  sendSerialized(json: string): Promise<void>;
}

/** What of a request's `_meta` the gateway's own requests repeat: a 2026-07-28 client's envelope. */
function envelopeOf(meta: unknown): Record<string, unknown> | undefined {
  if (typeof meta !== 'object' || meta === null || !('io.modelcontextprotocol/protocolVersion' in meta))
    return undefined;
  return listingMeta(meta as Record<string, unknown>);
}

/** Who ended a bridged session. */
export type BridgeEnd = 'client' | 'upstream' | 'gateway';

/** A client request sent upstream and not answered yet. */
interface InFlight {
  readonly id: JsonRpcId;
  readonly method: string;
  readonly progressToken: unknown;
  /** When it was sent upstream (Date.now()): its silence clock starts no earlier. */
  readonly sentAt: number;
}

/**
 * Joins a client-facing and an upstream-facing MCP transport at the JSON-RPC message level and puts
 * the server's checkpoint between them: every tools/call is decided before it is sent (a refusal is
 * answered here), every tools/list result is replaced by the value the checkpoint verified. Client
 * messages are handled one at a time, in order, so a call waiting for a fetch on miss is not
 * overtaken. One bridge is one session; either side closing ends both.
 */
export class MessageBridge {
  /** Called once when the session ends, with the side that ended it. */
  onclose?: (endedBy: BridgeEnd) => void;

  readonly #options: MessageBridgeOptions;
  readonly #inFlight = new Map<string, InFlight>();
  /** The spans of the requests not answered yet (tracing on), by id key. */
  readonly #traced = new Map<string, TracedRequest>();
  /** When the upstream last sent anything (Date.now()). */
  #heardAt = 0;
  /** Fires when the oldest request in flight may have waited out the upstream's silence. */
  #silence: NodeJS.Timeout | undefined;
  /** Keys of requests answered with a timeout: the upstream's late answer is not a second answer. */
  readonly #timedOut = new Set<string>();
  /** The client's latest 2026-07-28 envelope: the gateway's own requests speak the client's revision. */
  #envelope: Record<string, unknown> | undefined;
  readonly #own = new PendingReplies();
  #inbound: Promise<void> = Promise.resolve();
  #outbound: Promise<void> = Promise.resolve();
  #closing: Promise<void> | undefined;
  /** The upstream declared `logging` at initialize: `logging/setLevel` is its to answer too. */
  #upstreamLogs = false;
  /** Messages handed to the client pipe and not taken yet, and their characters. */
  #queued = 0;
  #queuedChars = 0;
  /** The upstream is not read: the client's queue passed its high-water mark. */
  #held = false;
  /** Characters of the gateway's own answers in the client's queue; past its mark the client is held. */
  #ownChars = 0;
  #clientHeld = false;
  /** Upstream messages dropped because they came after the session ended. */
  #afterEnd = 0;

  constructor(options: MessageBridgeOptions) {
    this.#options = options;
  }

  /** Starts the upstream (spawns the child, opens the stream), then the client side. */
  async start(): Promise<void> {
    const { client, upstream } = this.#options;
    const transport = upstream.transport;
    transport.onmessage = (message) => this.#fromUpstream(message);
    transport.onerror = (error) => this.#upstreamError(error);
    transport.onclose = () => void this.#end('upstream');
    client.onmessage = (message) => {
      this.#inbound = this.#inbound
        .then(() => this.#fromClient(message))
        .catch((error: unknown) => this.#clientMessageFailed(message, error));
    };
    client.onerror = (error) => this.#log('debug', 'bridge.client_error', error.message);
    client.onclose = () => void this.#end('client');
    await transport.start();
    await client.start();
  }

  /** Ends the session: the upstream is closed (a child is stopped) and the client transport too. */
  close(endedBy: BridgeEnd = 'gateway'): Promise<void> {
    return this.#end(endedBy);
  }

  async #fromClient(raw: JSONRPCMessage): Promise<void> {
    if (this.#closing !== undefined) return;
    const message = raw as unknown as JsonRpcMessage;
    // The HTTP fronts refuse these when they parse a body; a stdio client (wrap) is refused here.
    if (this.#refusedValue(message)) return;
    const { checkpoint } = this.#options;
    if ('method' in message && typeof message.method === 'string')
      checkpoint.alerts.telemetry.onRequest(checkpoint.config.name, message.method);
    if (isRequestWithoutId(message)) {
      // A request sent as a notification could be run upstream with no answer to refuse it by.
      this.#log('warn', 'request.dropped', `dropped a ${message.method} request sent without an id`);
      return;
    }
    if (isRequest(message) && !(await this.#admitRequest(message))) return;
    await this.#sendUpstream(raw, message);
  }

  /**
   * True when a client message is refused for its value: nested deeper than MAX_JSON_DEPTH, or
   * holding a number that would be sent as null (`1e400`: what the upstream read would not be what
   * was checked). A request gets -32600 (`arguments_invalid` when the number is in a call's
   * arguments); a notification is dropped.
   */
  #refusedValue(message: JsonRpcMessage): boolean {
    const problem = jsonValueProblem(message);
    if (problem === undefined) return false;
    const tooDeep = problem.kind === 'too_deep';
    this.#log(
      'warn',
      'client.invalid_message',
      tooDeep ? `nested deeper than ${MAX_JSON_DEPTH} levels` : 'a number out of range',
    );
    if (!isRequest(message)) return true;
    const refusal = tooDeep
      ? {
          code: ErrorCodes.INVALID_REQUEST,
          message: `Invalid Request: nested deeper than ${MAX_JSON_DEPTH} levels`,
        }
      : outOfRangeRefusal(message, problem.pointer);
    this.#toClient(
      jsonRpcError(message.id, refusal.code, refusal.message, 'data' in refusal ? refusal.data : undefined),
    );
    return true;
  }

  /**
   * A client request before it goes upstream: screened (tools/call, prompts/get, completion/complete), answered here
   * (`logging/setLevel` when the gateway holds the log level), or expected; then counted in flight.
   * False when it was answered here and must not be sent.
   */
  async #admitRequest(message: JsonRpcRequest & { id: JsonRpcId }): Promise<boolean> {
    const { checkpoint, sessionKey } = this.#options;
    const front = this.#options.front ?? 'stdio';
    this.#timedOut.delete(idKey(message.id));
    this.#envelope = envelopeOf(message.params?._meta) ?? this.#envelope;
    // A stdio client's trace context travels in params._meta; an HTTP client's is already active.
    const parent = front === 'stdio' ? traceContextOfMeta(message.params) : undefined;
    const traced = traceRequest(front, checkpoint.config.name, message, parent);
    if (traced !== undefined) this.#traced.set(idKey(message.id), traced);
    if (isScreened(checkpoint, message.method, message.params)) {
      const refusal = await withTrace(traced, () =>
        screenCall(
          checkpoint,
          sessionKey,
          message.id,
          message.params,
          (listing) => this.#listUpstream(listing),
          message.method,
        ),
      );
      if (refusal !== undefined) {
        this.#toClient(refusal);
        this.#noticeRefusal(refusal);
        return false;
      }
    } else if (message.method === 'logging/setLevel' && this.#options.notices !== undefined) {
      const known = this.#options.notices.setLevel(message.params?.level);
      if (!this.#upstreamLogs) {
        this.#toClient(
          known
            ? { jsonrpc: '2.0', id: message.id, result: {} }
            : jsonRpcError(message.id, ErrorCodes.INVALID_PARAMS, 'Invalid params: unknown log level'),
        );
        return false;
      }
    } else checkpoint.expectAnswer(sessionKey, message.id, message.method, message.params);
    const meta = message.params?._meta as { progressToken?: unknown } | undefined;
    this.#inFlight.set(idKey(message.id), {
      id: message.id,
      method: message.method,
      progressToken: meta?.progressToken,
      sentAt: Date.now(),
    });
    this.#watchSilence();
    return true;
  }

  /** Sends a client message upstream; a request that cannot be sent is answered -32041. */
  async #sendUpstream(raw: JSONRPCMessage, message: JsonRpcMessage): Promise<void> {
    try {
      const traced = isRequest(message) ? this.#spanOf(message.id) : undefined;
      // Within the request's span: an HTTP upstream's request carries its traceparent.
      await withTrace(traced, () => this.#options.upstream.transport.send(raw));
    } catch (error) {
      this.#log('warn', 'upstream.send_failed', (error as Error).message);
      if (isRequest(message) && this.#inFlight.delete(idKey(message.id))) {
        this.#options.checkpoint.forgetAnswers(this.#options.sessionKey, [message.id]);
        this.#toClient(
          jsonRpcError(
            message.id,
            ErrorCodes.UPSTREAM_UNAVAILABLE,
            'toolpin: the upstream could not be reached',
          ),
        );
      }
    }
  }

  /** The span of a request not answered yet; none (without computing its key) when tracing is off. */
  #spanOf(id: JsonRpcId): TracedRequest | undefined {
    return this.#traced.size === 0 || id === null ? undefined : this.#traced.get(idKey(id));
  }

  /**
   * A client message whose handling threw: the message fails (a request gets -32603), the session
   * and the process go on.
   */
  #clientMessageFailed(raw: JSONRPCMessage, error: unknown): void {
    this.#log('error', 'message.failed', `a client message could not be handled: ${errorSummary(error)}`);
    const message = raw as unknown as JsonRpcMessage;
    if (typeof message === 'object' && message !== null && isRequest(message)) {
      this.#inFlight.delete(idKey(message.id));
      this.#toClient(
        jsonRpcError(
          message.id,
          ErrorCodes.INTERNAL_ERROR,
          'toolpin: the gateway failed to handle this request',
        ),
      );
    }
  }

  /**
   * Every upstream message is checked before anything reads it; one that is not valid JSON-RPC, or
   * nests too deep, is dropped (and the request it answers gets -32042). A message whose handling
   * throws fails that message, never the process.
   */
  #fromUpstream(raw: JSONRPCMessage): void {
    // The session ended: each request in flight got its -32041 then, so an answer now is a second
    // one, and nothing else is for a client that left. What a stopped upstream still writes (a
    // child held back is read again so that it can exit) is read and dropped, never queued.
    if (this.#closing !== undefined) {
      this.#afterEnd += 1;
      return;
    }
    this.#heardAt = Date.now();
    // A batch: each message on its own (dropped whole, the requests it answers went unanswered).
    for (const message of upstreamBatch(raw)) this.#fromUpstreamMessage(message as JSONRPCMessage);
  }

  #fromUpstreamMessage(raw: JSONRPCMessage): void {
    const invalid = checkUpstreamMessage(raw);
    if (invalid !== undefined) {
      this.#dropInvalid(invalid);
      return;
    }
    try {
      this.#relay(raw as unknown as JsonRpcMessage);
    } catch (error) {
      this.#upstreamMessageFailed(raw as unknown as JsonRpcMessage, error);
    }
  }

  /** Drops an invalid upstream message; the request it answers (the client's or the gateway's own) gets -32042. */
  #dropInvalid(invalid: InvalidUpstreamMessage): void {
    const id = invalid.id;
    const server = this.#options.checkpoint.config.name;
    let answered = false;
    if (id !== undefined) {
      const refusal = unverifiableAnswer(id, invalid, server);
      if (this.#own.settle(refusal)) answered = true;
      else if (this.#inFlight.delete(idKey(id))) {
        answered = true;
        // Answered now: a valid message under the same id later is a second answer, dropped.
        this.#options.checkpoint.forgetAnswers(this.#options.sessionKey, [id]);
        this.#toClient(refusal, id, true);
      }
    }
    logInvalidMessage(this.#options.logger, this.#fields(), invalid, answered);
  }

  #upstreamMessageFailed(message: JsonRpcMessage, error: unknown): void {
    this.#log('error', 'message.failed', `an upstream message could not be handled: ${errorSummary(error)}`);
    if (!isResponse(message) || message.id === null) return;
    const failure = jsonRpcError(
      message.id,
      ErrorCodes.INTERNAL_ERROR,
      'toolpin: the gateway failed to handle the upstream answer',
    );
    if (this.#own.settle(failure)) return;
    if (this.#inFlight.delete(idKey(message.id))) {
      this.#options.checkpoint.forgetAnswers(this.#options.sessionKey, [message.id]);
      this.#toClient(failure, message.id, true);
    }
  }

  #relay(message: JsonRpcMessage): void {
    let related: JsonRpcId | undefined;
    if (isResponse(message)) {
      // The gateway's own listing is the checkpoint's to inspect; the client never asked for it.
      if (this.#own.settle(message)) return;
      // The client already has its answer (-32041 timeout): a second one is not sent.
      if (this.#timedOut.delete(idKey(message.id))) {
        this.#log('info', 'upstream.late_answer', 'an answer after its request timed out, dropped');
        return;
      }
      // Inspected before it counts as answered: if inspection throws, the request still gets an error.
      // The checkpoint answers each awaited request once, under its own id (an answer the client
      // would match by Number(id) leaves under the request's id); any other answer is dropped.
      const replaced = withTrace(this.#spanOf(message.id), () =>
        this.#options.checkpoint.inspectUpstreamMessage(this.#options.sessionKey, message),
      );
      if (replaced === DROPPED) return;
      const answer = replaced as JsonRpcResponse;
      const request = this.#inFlight.get(idKey(answer.id));
      this.#inFlight.delete(idKey(answer.id));
      related = answer.id;
      if (request?.method === 'initialize') {
        this.#adoptProtocolVersion(answer);
        this.#toClient(this.#declareLogging(answer), related, true);
        return;
      }
      this.#toClient(answer, related, true);
      // A refusal of the gateway's own (the upstream sent a result), never the upstream's error.
      if (request?.method === 'tools/call' && message.error === undefined) this.#noticeRefusal(answer);
      return;
    }
    related = this.#relatedRequest(message);
    const replaced = this.#options.checkpoint.inspectUpstreamMessage(this.#options.sessionKey, message);
    this.#toClient(replaced, related, true);
  }

  /**
   * Which client request an upstream request or notification belongs to, so that a Streamable HTTP
   * front sends it on that request's stream: progress by its token; requests (sampling, elicitation)
   * and log messages to the newest request in flight, as a stdio server does not say. Other
   * notifications (list_changed, resource updates) go on the session's own stream.
   */
  #relatedRequest(message: JsonRpcMessage): JsonRpcId | undefined {
    if (!('method' in message)) return undefined;
    if (message.method === 'notifications/progress') {
      const token = message.params?.progressToken;
      for (const request of this.#inFlight.values())
        if (request.progressToken !== undefined && request.progressToken === token) return request.id;
      return undefined;
    }
    if (message.id === undefined && message.method !== 'notifications/message') return undefined;
    return [...this.#inFlight.values()].at(-1)?.id;
  }

  /**
   * With notices on, the client is told the server logs (the gateway does, beside the upstream):
   * the initialize result it receives declares `logging`, and notices may be sent from now on.
   */
  #declareLogging(message: JsonRpcResponse): JsonRpcResponse {
    const notices = this.#options.notices;
    const result = message.result as { capabilities?: unknown } | undefined;
    if (notices === undefined || message.error !== undefined || result === undefined) return message;
    const capabilities = isObject(result.capabilities) ? result.capabilities : {};
    this.#upstreamLogs = 'logging' in capabilities;
    notices.enable();
    if (this.#upstreamLogs) return message;
    return { ...message, result: { ...result, capabilities: { ...capabilities, logging: {} } } };
  }

  /** A pin policy refusal of a call is also told to the person, as a notice (bounded: see ClientNotices). */
  #noticeRefusal(answer: unknown): void {
    const notices = this.#options.notices;
    if (notices === undefined || !isResponse(answer) || answer.error === undefined) return;
    if (answer.error.code !== ErrorCodes.PIN_POLICY_BLOCKED) return;
    const data = answer.error.data as DenyData | undefined;
    if (data !== undefined) notices.callRefused(answer.error.message, data);
  }

  /** Sends the gateway's own notification (a notice) on the session's stream. */
  notify(notification: JsonRpcMessage): void {
    if (this.#closing === undefined) this.#toClient(notification);
  }

  #adoptProtocolVersion(message: JsonRpcResponse): void {
    const version = (message.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    if (typeof version === 'string') this.#options.upstream.transport.setProtocolVersion?.(version);
  }

  /**
   * Queues a message for the client, after those queued before it. `fromUpstream`: it is (or
   * answers in place of) an upstream message, which holding the upstream back bounds; the gateway's
   * own answers to the client (refusals, failures) are bounded by holding the client back instead.
   */
  #toClient(message: unknown, related?: JsonRpcId, fromUpstream = false): void {
    // The answer to a traced request ends its span (every answer a client gets passes here).
    if (this.#traced.size > 0 && isResponse(message) && message.id !== null) {
      const key = idKey(message.id);
      endRequest(this.#traced.get(key), message);
      this.#traced.delete(key);
    }
    const pipe = this.#options.clientPipe;
    if (pipe !== undefined) {
      this.#queueText(pipe, JSON.stringify(message), fromUpstream);
      return;
    }
    const out = message as JSONRPCMessage;
    // Sends are chained: a progress notification must not be overtaken by its result.
    this.#outbound = this.#outbound.then(() => this.#sendToClient(out, related));
  }

  /**
   * Queues a message serialized (its one serialization: the pipe writes this text) after those
   * before it, counted in the client's queue by its length until the pipe took it.
   */
  #queueText(pipe: ClientPipe, text: string, fromUpstream: boolean): void {
    const own = fromUpstream ? 0 : text.length;
    this.#count(1, text.length, own);
    this.#outbound = this.#outbound.then(() =>
      pipe
        .sendSerialized(text)
        .catch((error: Error) => this.#log('debug', 'client.send_failed', error.message))
        .finally(() => this.#count(-1, text.length, own)),
    );
  }

  async #sendToClient(out: JSONRPCMessage, related: JsonRpcId | undefined): Promise<void> {
    const client = this.#options.client;
    try {
      await client.send(
        out,
        related === undefined || related === null ? undefined : { relatedRequestId: related },
      );
    } catch (error) {
      if (isResponse(out) || related === undefined) {
        this.#log('debug', 'client.send_failed', (error as Error).message);
        return;
      }
      // The request's stream is gone (answered, or the client left it): the session stream then.
      await client.send(out).catch((again: Error) => this.#log('debug', 'client.send_failed', again.message));
    }
  }

  /**
   * Counts a message into (1) or out of (-1) the client pipe's queue (`own`: its characters when
   * the gateway wrote it itself); holds the upstream and the client back past their marks, and
   * reads them again under the low ones.
   */
  #count(step: 1 | -1, chars: number, own: number): void {
    this.#queued += step;
    this.#queuedChars += step * chars;
    this.#ownChars += step * own;
    this.#holdUpstream();
    this.#holdClient();
  }

  /**
   * Past CLIENT_QUEUE_HIGH_MESSAGES or DEFAULT_CLIENT_QUEUE_HIGH_BYTES waiting for the client, the
   * upstream is not read until the queue is under the low marks. While it is held its silence is
   * the client's doing: the silence clock stops, and starts afresh when it is read again.
   */
  #holdUpstream(): void {
    const reading = this.#options.upstream.reading;
    if (reading === undefined) return;
    if (
      !this.#held &&
      this.#closing === undefined &&
      (this.#queued > CLIENT_QUEUE_HIGH_MESSAGES || this.#queuedChars > DEFAULT_CLIENT_QUEUE_HIGH_BYTES)
    ) {
      this.#held = true;
      clearTimeout(this.#silence);
      this.#silence = undefined;
      reading.pauseReading();
      this.#log(
        'debug',
        'upstream.held',
        `the client has ${this.#queued} messages to read: the upstream waits`,
      );
    } else if (
      this.#held &&
      this.#queued <= CLIENT_QUEUE_LOW_MESSAGES &&
      this.#queuedChars <= DEFAULT_CLIENT_QUEUE_LOW_BYTES
    ) {
      this.#held = false;
      this.#heardAt = Date.now();
      reading.resumeReading();
      this.#watchSilence();
    }
  }

  /**
   * Past CLIENT_OWN_ANSWERS_HIGH_BYTES of the gateway's own answers waiting for the client, what the
   * client sends is not read until they are under CLIENT_OWN_ANSWERS_LOW_BYTES: a client that is
   * answered by the gateway itself (refused calls) and does not read is held back as a server
   * blocked on its full stdout holds it.
   */
  #holdClient(): void {
    const reading = this.#options.clientPipe;
    if (reading === undefined) return;
    if (!this.#clientHeld && this.#ownChars > CLIENT_OWN_ANSWERS_HIGH_BYTES) {
      this.#clientHeld = true;
      reading.pauseReading();
      this.#log('debug', 'client.held', "the client does not read the gateway's answers: its input waits");
    } else if (this.#clientHeld && this.#ownChars <= CLIENT_OWN_ANSWERS_LOW_BYTES) {
      this.#clientHeld = false;
      reading.resumeReading();
    }
  }

  /**
   * Arms the silence clock while requests are in flight, for the earliest moment one of them may
   * have waited `streamIdleMs` with nothing from the upstream. Lazy: an upstream message only moves
   * `#heardAt`, and the timer re-arms itself when it finds nothing due.
   */
  #watchSilence(): void {
    if (this.#silence !== undefined || this.#inFlight.size === 0 || this.#closing !== undefined || this.#held)
      return;
    let oldest = Infinity;
    for (const request of this.#inFlight.values()) oldest = Math.min(oldest, request.sentAt);
    const due = Math.max(oldest, this.#heardAt) + this.#idleMs;
    this.#silence = setTimeout(
      () => {
        this.#silence = undefined;
        this.#timeOutSilent();
        this.#watchSilence();
      },
      Math.max(0, due - Date.now()),
    );
    this.#silence.unref();
  }

  /**
   * Answers -32041 `timeout` for every request the upstream has been silent on for `streamIdleMs`
   * since it was sent (the HTTP proxy's rule for an answer still owed), and tells the upstream it
   * may stop (notifications/cancelled; never for initialize, which cannot be cancelled).
   */
  #timeOutSilent(): void {
    if (this.#held) return;
    const idleMs = this.#idleMs;
    const now = Date.now();
    const server = this.#options.checkpoint.config.name;
    const message = `toolpin: the upstream sent nothing for ${idleMs} ms`;
    let count = 0;
    for (const [key, request] of this.#inFlight) {
      if (Math.max(request.sentAt, this.#heardAt) + idleMs > now) continue;
      this.#inFlight.delete(key);
      this.#timedOut.add(key);
      this.#options.checkpoint.forgetAnswers(this.#options.sessionKey, [request.id]);
      count += 1;
      this.#toClient(upstreamFailureOf(server, request.id, 'timeout', message), request.id);
      if (request.method !== 'initialize')
        void this.#options.upstream.transport
          .send({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId: request.id as string | number, reason: message },
          })
          .catch((error: Error) => this.#log('debug', 'upstream.send_failed', error.message));
    }
    for (const key of this.#timedOut) {
      if (this.#timedOut.size <= MAX_TIMED_OUT) break;
      this.#timedOut.delete(key);
    }
    if (count > 0)
      this.#options.logger.warn(
        { event: 'upstream.timeout', ...this.#fields(), requests: count },
        `the upstream sent nothing for ${idleMs} ms: ${count} request(s) answered with a timeout`,
      );
  }

  get #idleMs(): number {
    return this.#options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
  }

  #listUpstream({ method, surface }: SurfaceListing): Promise<FetchedPage[]> {
    const limits = {
      maxPages: this.#options.maxPages ?? DEFAULT_MAX_PAGES,
      timeoutMs: this.#options.timeoutMs,
      surface,
    };
    return collectToolPages(async (cursor) => {
      // The gateway's ids are UUIDs under a prefix no client uses: they never collide with the client's.
      const id = `toolpin-${randomUUID()}`;
      const answer = this.#own.expect(id, this.#options.timeoutMs);
      // The wait starts before the send (the answer may come at once); when the send fails nothing
      // awaits it, and its later rejection (timeout, session end) must not reach the event loop.
      answer.catch(() => undefined);
      // A 2026-07-28 upstream serves claim-less requests as 2025-era ones (and may pin its connection
      // to that era): the listing carries the client's envelope, as the client's own requests do.
      const params = {
        ...(cursor === undefined ? {} : { cursor }),
        ...(this.#envelope === undefined ? {} : { _meta: this.#envelope }),
      };
      await this.#options.upstream.transport.send({ jsonrpc: '2.0', id, method, params });
      const reply = await answer;
      if (reply.error !== undefined)
        throw new GatewayError(
          'GW_CATALOG_UNAVAILABLE',
          `the upstream refused ${method}: ${reply.error.message}`,
        );
      return reply.result;
    }, limits);
  }

  #upstreamError(error: Error): void {
    if (error instanceof GatewayError && error.code === 'GW_SESSION_FAILED') {
      // The transport stops the upstream; its close ends this session.
      this.#log('error', 'session.failed', errorSummary(error));
      return;
    }
    this.#log('warn', 'upstream.error', errorSummary(error));
    if (this.#options.upstream.isFatal(error)) void this.#end('upstream');
  }

  #end(by: BridgeEnd): Promise<void> {
    // Assigned before the shutdown runs: closing one side calls back here synchronously. A failing
    // shutdown is logged, never left to reach the event loop as an unhandled rejection.
    this.#closing ??= Promise.resolve()
      .then(() => this.#shutdown(by))
      .catch((error: unknown) => this.#log('error', 'session.failed', errorSummary(error)));
    return this.#closing;
  }

  async #shutdown(by: BridgeEnd): Promise<void> {
    const { client, upstream, checkpoint, sessionKey } = this.#options;
    const reason = describeUpstreamEnd(by, upstream.transport);
    this.#log(by === 'upstream' ? 'warn' : 'info', 'session.ended', reason);
    this.#own.rejectAll(new GatewayError('GW_UPSTREAM_EXITED', reason));
    clearTimeout(this.#silence);
    this.#options.notices?.close();
    // Every request the upstream will now never answer gets an error instead of silence.
    for (const request of this.#inFlight.values()) {
      this.#toClient(
        jsonRpcError(request.id, ErrorCodes.UPSTREAM_UNAVAILABLE, `toolpin: ${reason}`),
        request.id,
      );
    }
    this.#inFlight.clear();
    for (const traced of this.#traced.values()) endRequest(traced);
    this.#traced.clear();
    await upstream.transport
      .close()
      .catch((error: Error) => this.#log('warn', 'upstream.close_failed', error.message));
    if (this.#afterEnd > 0)
      this.#log(
        'info',
        'upstream.after_end',
        `${this.#afterEnd} upstream message(s) after the session ended, dropped`,
      );
    // A client that stopped reading must not hold the session open forever.
    await settleWithin(this.#outbound, CLIENT_FLUSH_MS);
    await client.close().catch((error: Error) => this.#log('debug', 'client.close_failed', error.message));
    checkpoint.forgetSession(sessionKey);
    this.onclose?.(by);
  }

  #fields(): Record<string, unknown> {
    const { checkpoint, sessionKey } = this.#options;
    return { server: checkpoint.config.name, session: sessionLabel(sessionKey) };
  }

  #log(level: 'debug' | 'info' | 'warn' | 'error', event: string, message: string): void {
    this.#options.logger[level]({ event, ...this.#fields() }, message);
  }
}
