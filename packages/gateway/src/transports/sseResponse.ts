import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { idKey, isResponse, type JsonRpcId } from '../wire/jsonRpc.js';
import { encodeSseMessage } from '../wire/sseEncode.js';
import { SseRewriter } from '../wire/sseRewriter.js';
import { upstreamFailure, type Exchange, type UpstreamFailureReason } from './exchange.js';

/** A relayed SSE stream, as shutdown sees it. */
export interface SseRelay {
  /** Ends the client's stream cleanly (the end of the body, not an error) and drops the upstream one. */
  end(): void;
}

/** Options of {@link relaySseResponse}. */
export interface SseRelayOptions {
  /** The response headers the client receives (the gateway frames the body itself). */
  readonly headers: OutgoingHttpHeaders;
  /**
   * A stream that still owes answers ends, with an error for each unanswered request, after this
   * long without a byte.
   */
  readonly idleMs: number;
  /** Called when the upstream stream fails (broken, idle, unparseable framing). */
  readonly onBroken: (error: Error) => void;
  /** Called for an event whose data the gateway dropped (not JSON, not JSON-RPC). */
  readonly onDropped: (problem: string, reason: UpstreamFailureReason) => void;
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
  const { guard, sessionKey } = exchange;
  res.writeHead(upstream.statusCode ?? 200, {
    ...options.headers,
    'content-type': 'text/event-stream',
    // Buffering proxies (nginx) and compression would hold events back; neither may apply here.
    'x-accel-buffering': 'no',
  });
  for (const error of exchange.refused) res.write(encodeSseMessage(error));
  // The headers leave with the first event when it came with them (one write instead of two, the
  // common case of a POST answered at once); a stream with nothing to say yet gets them one turn later.
  let flushed = exchange.refused.length > 0;
  setImmediate(() => {
    if (!flushed && !res.writableEnded && !res.destroyed) res.flushHeaders();
  });

  const unanswered = new Map<string, JsonRpcId>(exchange.requestIds.map((id) => [idKey(id), id]));
  const rewriter = new SseRewriter({
    rewrite: (data) => {
      if (data === '') return undefined;
      const verdict = guard.inspectUpstreamText(sessionKey, data, [...unanswered.values()]);
      if (!verdict.ok) {
        options.onDropped(`an event's data is ${verdict.problem}`, verdict.reason);
        return null;
      }
      for (const message of verdict.out) if (isResponse(message)) unanswered.delete(idKey(message.id));
      if (unanswered.size === 0) clearTimeout(idle);
      if (verdict.out.length === 0) return null;
      if (verdict.text !== undefined) return verdict.text;
      return JSON.stringify(verdict.batch ? verdict.out : verdict.out[0]);
    },
    write: (text) => {
      flushed = true;
      // A large event (a listing) goes as bytes: a string would be measured, then encoded, again.
      if (!res.write(text.length > 65_536 ? Buffer.from(text) : text)) holdUpstream();
    },
    onError: (error) => {
      options.onBroken(error);
      finish('malformed', 'toolpin: the upstream stream could not be parsed');
    },
  });

  let ended = false;
  let clientGone = false;
  let idle: NodeJS.Timeout | undefined;
  // A client that reads slower than the upstream writes holds the upstream back (backpressure):
  // the gateway never queues more than one chunk's events for it.
  let held = false;
  function holdUpstream(): void {
    if (held) return;
    held = true;
    clearTimeout(idle);
    upstream.pause();
    res.once('drain', () => {
      held = false;
      upstream.resume();
      armIdle();
    });
  }
  // Only a stream that owes answers can hang: a listening stream (GET, subscriptions/listen) may
  // rightly be quiet for as long as the client keeps it open.
  const armIdle = (): void => {
    clearTimeout(idle);
    // A stream held back for the client is not the upstream's silence.
    if (unanswered.size === 0 || held) return;
    idle = setTimeout(() => {
      options.onBroken(new Error(`upstream stream idle for ${options.idleMs} ms`));
      finish('timeout', `toolpin: the upstream sent nothing for ${options.idleMs} ms`);
    }, options.idleMs);
    idle.unref();
  };
  armIdle();

  /** Ends the client's stream: every request the upstream left unanswered gets an error first. */
  function finish(reason: UpstreamFailureReason, message: string): void {
    clearTimeout(idle);
    if (ended || clientGone || res.writableEnded) return;
    ended = true;
    guard.forgetCalls(sessionKey, [...unanswered.values()]);
    for (const id of unanswered.values())
      res.write(encodeSseMessage(upstreamFailure(exchange, id, reason, message)));
    res.end();
    upstream.destroy();
  }

  upstream.on('data', (chunk: Buffer) => {
    armIdle();
    rewriter.push(chunk);
  });
  upstream.on('end', () => {
    clearTimeout(idle);
    rewriter.end();
    if (ended || res.writableEnded) return;
    ended = true;
    res.end();
  });
  upstream.on('error', () => undefined);
  upstream.on('close', () => {
    if (ended || clientGone || res.writableEnded) return;
    // The upstream died mid-stream: every request it did not answer gets an error, then the stream ends.
    options.onBroken(new Error('upstream stream closed before it ended'));
    finish('closed', 'toolpin: the upstream closed the stream before answering');
  });
  // A client that goes away takes the upstream stream with it.
  res.on('close', () => {
    clearTimeout(idle);
    clientGone = !res.writableEnded;
    if (!upstream.complete) upstream.destroy();
  });
  return {
    end: () => {
      clearTimeout(idle);
      if (res.writableEnded) return;
      ended = true;
      res.end();
      upstream.destroy();
    },
  };
}
