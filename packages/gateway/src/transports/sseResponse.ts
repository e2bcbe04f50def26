import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { idKey, isResponse, type JsonRpcId } from '../wire/jsonRpc.js';
import { encodeSseMessage } from '../wire/sseEncode.js';
import { SseRewriter } from '../wire/sseRewriter.js';
import type { Deadline, DeadlineWheel } from './deadlineWheel.js';
import { upstreamFailure, type Exchange, type UpstreamFailureReason } from './exchange.js';

/** A relayed SSE stream, as shutdown sees it. */
export interface SseRelay {
  /** Ends the client's stream cleanly (the end of the body, not an error) and drops the upstream one. */
  end(): void;
}

/** Options of {@link relaySseResponse}. */
export interface SseRelayOptions {
  /**
   * The response headers the client receives (the gateway frames the body itself): a fresh object
   * the relay completes and hands to `writeHead`.
   */
  readonly headers: OutgoingHttpHeaders;
  /**
   * A stream that still owes answers ends, with an error for each unanswered request, after this
   * long without a byte.
   */
  readonly idleMs: number;
  /** Times the idle limit (one per server). */
  readonly wheel: DeadlineWheel;
  /** Called when the upstream stream fails (broken, idle, unparseable framing). */
  readonly onBroken: (error: Error) => void;
  /** Called for an event whose data the gateway dropped (not JSON, not JSON-RPC). */
  readonly onDropped: (problem: string, reason: UpstreamFailureReason) => void;
  /** Called for an event of a type other than `message` (dropped: no client reads it as a message). */
  readonly onIgnored?: () => void;
}

/**
 * Passes an upstream SSE stream to the client event by event: the data of every event is parsed
 * as JSON (never sniffed), every JSON-RPC message in it validated and inspected, and the client
 * receives the gateway's own encoding of what was decided. An event whose data is not JSON or
 * not JSON-RPC is dropped (and logged); an event without data (a priming event that only sets
 * an id) passes as such.
 */
export function relaySseResponse(
  exchange: Exchange,
  upstream: IncomingMessage,
  res: ServerResponse,
  options: SseRelayOptions,
): SseRelay {
  const relay = new SseStreamRelay(exchange, upstream, res, options);
  return { end: () => relay.end() };
}

function flushIfQuiet(relay: SseStreamRelay): void {
  relay.flushIfQuiet();
}

/** One relayed stream: its rewriter, the requests it still owes answers to, and its clock. */
class SseStreamRelay implements Deadline {
  deadlineAt = 0;
  listPrev: Deadline | null = null;
  listNext: Deadline | null = null;
  listed = false;
  readonly #exchange: Exchange;
  readonly #upstream: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #options: SseRelayOptions;
  readonly #unanswered: Map<string, JsonRpcId>;
  readonly #rewriter: SseRewriter;
  #flushed: boolean;
  #ended = false;
  #clientGone = false;
  // A client that reads slower than the upstream writes holds the upstream back (backpressure):
  // the gateway never queues more than one chunk's events for it.
  #held = false;

  constructor(exchange: Exchange, upstream: IncomingMessage, res: ServerResponse, options: SseRelayOptions) {
    this.#exchange = exchange;
    this.#upstream = upstream;
    this.#res = res;
    this.#options = options;
    this.#unanswered = new Map();
    for (const id of exchange.requestIds) this.#unanswered.set(idKey(id), id);
    // A listen request is owed nothing: its stream may stay quiet, and end without its result.
    for (const id of exchange.listening ?? []) this.#unanswered.delete(idKey(id));
    // The relay's own copy of the headers (see SseRelayOptions), not spread into another: copying a
    // headers object of the upstream's shape cost a few microseconds per answer.
    const headers = options.headers;
    headers['content-type'] = 'text/event-stream';
    // Buffering proxies (nginx) and compression would hold events back; neither may apply here.
    headers['x-accel-buffering'] = 'no';
    res.writeHead(upstream.statusCode ?? 200, headers);
    for (const error of exchange.refused) res.write(encodeSseMessage(error));
    // The headers leave with the first event when it came with them (one write instead of two, the
    // common case of a POST answered at once); a stream with nothing to say yet gets them one turn later.
    this.#flushed = exchange.refused.length > 0;
    setImmediate(flushIfQuiet, this);
    this.#rewriter = new SseRewriter({
      rewrite: (data) => this.#decide(data),
      write: (text) => this.#write(text),
      rewriteBytes: (slices, length) => this.#decideBytes(slices, length),
      writeParts: (parts) => this.#writeParts(parts),
      onIgnored: () => options.onIgnored?.(),
      onError: (error) => {
        options.onBroken(error);
        this.#finish('malformed', 'toolpin: the upstream stream could not be parsed');
      },
    });
    this.#armIdle();
    this.#listen();
  }

  /** Sends the headers of a stream that had nothing to say in its first turn. */
  flushIfQuiet(): void {
    const res = this.#res;
    if (!this.#flushed && !res.writableEnded && !res.destroyed) res.flushHeaders();
  }

  /** Ends the client's stream cleanly (shutdown) and drops the upstream one. */
  end(): void {
    this.#options.wheel.disarm(this);
    if (this.#res.writableEnded) return;
    this.#ended = true;
    this.#res.end();
    this.#upstream.destroy();
  }

  #listen(): void {
    const upstream = this.#upstream;
    const res = this.#res;
    upstream.on('data', (chunk: Buffer) => {
      this.#armIdle();
      this.#rewriter.push(chunk);
    });
    upstream.on('end', () => {
      this.#options.wheel.disarm(this);
      this.#rewriter.end();
      // The rewriter's own failure, or a client gone: the stream is over already.
      if (this.#ended || this.#clientGone || res.writableEnded) return;
      // Without a session the answers owed can come on this stream only (in a session, the client
      // may resume it: they can still come on the session's GET stream).
      if (this.#exchange.answers !== undefined && this.#unanswered.size > 0) {
        this.#options.onBroken(new Error('upstream stream ended before answering every request'));
        this.#finish('unanswered', 'toolpin: the upstream ended the stream without answering');
        return;
      }
      this.#ended = true;
      res.end();
    });
    upstream.on('error', () => undefined);
    upstream.on('close', () => {
      if (this.#ended || this.#clientGone || res.writableEnded) return;
      // The upstream died mid-stream: every request it did not answer gets an error, then the stream ends.
      this.#options.onBroken(new Error('upstream stream closed before it ended'));
      this.#finish('closed', 'toolpin: the upstream closed the stream before answering');
    });
    // A client that goes away takes the upstream stream with it.
    res.on('close', () => {
      this.#options.wheel.disarm(this);
      this.#clientGone = !res.writableEnded;
      if (!upstream.complete) upstream.destroy();
    });
  }

  /** What the client receives for one event's data: the decided text, or null to drop the event. */
  #decide(data: string): string | null | undefined {
    if (data === '') return undefined;
    const { checkpoint, sessionKey } = this.#exchange;
    const verdict = checkpoint.inspectUpstreamText(sessionKey, data, this.#exchange.answers);
    if (!verdict.ok) {
      this.#options.onDropped(`an event's data is ${verdict.problem}`, verdict.reason);
      return null;
    }
    for (const message of verdict.out) if (isResponse(message)) this.#unanswered.delete(idKey(message.id));
    if (this.#unanswered.size === 0) this.#options.wheel.disarm(this);
    if (verdict.out.length === 0) return null;
    if (verdict.text !== undefined) return verdict.text;
    return JSON.stringify(verdict.batch ? verdict.out : verdict.out[0]);
  }

  /** A listing verified before, recognized by its bytes: the pieces of its answer, or undefined. */
  #decideBytes(slices: readonly Buffer[], length: number): readonly (string | Buffer)[] | undefined {
    const { checkpoint, sessionKey, answers } = this.#exchange;
    const known = checkpoint.knownListingBytes(sessionKey, slices, length, answers);
    if (known === undefined) return undefined;
    this.#unanswered.delete(idKey(known.id));
    if (this.#unanswered.size === 0) this.#options.wheel.disarm(this);
    return known.parts;
  }

  /** One event's pieces in one write (the shared bytes of a listing are written, not copied). */
  #writeParts(parts: readonly (string | Buffer)[]): void {
    this.#flushed = true;
    const res = this.#res;
    res.cork();
    let ok = true;
    for (const part of parts) ok = res.write(part);
    res.uncork();
    if (!ok) this.#holdUpstream();
  }

  #write(text: string): void {
    this.#flushed = true;
    // A large event (a listing) goes as bytes: a string would be measured, then encoded, again.
    if (!this.#res.write(text.length > 65_536 ? Buffer.from(text) : text)) this.#holdUpstream();
  }

  #holdUpstream(): void {
    if (this.#held) return;
    this.#held = true;
    this.#options.wheel.disarm(this);
    this.#upstream.pause();
    this.#res.once('drain', () => {
      this.#held = false;
      this.#upstream.resume();
      this.#armIdle();
    });
  }

  // Only a stream that owes answers can hang: a listening stream (GET, subscriptions/listen) may
  // rightly be quiet for as long as the client keeps it open.
  #armIdle(): void {
    // A stream held back for the client is not the upstream's silence.
    if (this.#unanswered.size === 0 || this.#held) this.#options.wheel.disarm(this);
    else this.#options.wheel.arm(this, this.#options.idleMs);
  }

  /** The upstream sent nothing for idleMs while answers were owed. */
  onDeadline(): void {
    const { idleMs } = this.#options;
    this.#options.onBroken(new Error(`upstream stream idle for ${idleMs} ms`));
    this.#finish('timeout', `toolpin: the upstream sent nothing for ${idleMs} ms`);
  }

  /** Ends the client's stream: every request the upstream left unanswered gets an error first. */
  #finish(reason: UpstreamFailureReason, message: string): void {
    this.#options.wheel.disarm(this);
    const res = this.#res;
    if (this.#ended || this.#clientGone || res.writableEnded) return;
    this.#ended = true;
    const { checkpoint, sessionKey } = this.#exchange;
    // Only the requests still owed an answer: one answered on another stream is not answered twice.
    const owed = checkpoint.forgetAnswers(sessionKey, [...this.#unanswered.values()], this.#exchange.answers);
    for (const id of owed) res.write(encodeSseMessage(upstreamFailure(this.#exchange, id, reason, message)));
    res.end();
    this.#upstream.destroy();
  }
}
