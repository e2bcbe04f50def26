import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCodes } from '../wire/errorCodes.js';
import { responseHeadersFrom } from '../wire/httpHeaders.js';
import { idKey, isResponse, jsonRpcError } from '../wire/jsonRpc.js';
import { encodeSseMessage } from '../wire/sseEncode.js';
import { SseRewriter } from '../wire/sseRewriter.js';
import type { Exchange } from './exchange.js';

/** A relayed SSE stream, as shutdown sees it. */
export interface SseRelay {
  /** Ends the client's stream cleanly (the end of the body, not an error) and drops the upstream one. */
  end(): void;
}

/** Passes an upstream SSE stream to the client event by event, inspecting each message. */
export function relaySseResponse(
  exchange: Exchange,
  upstream: IncomingMessage,
  res: ServerResponse,
  onBroken: (error: Error) => void,
): SseRelay {
  const headers = responseHeadersFrom(upstream.headers, true);
  // Buffering proxies (nginx) and compression would hold events back; neither may apply here.
  headers['x-accel-buffering'] = 'no';
  delete headers['content-encoding'];
  res.writeHead(upstream.statusCode ?? 200, headers);
  for (const error of exchange.injected) res.write(encodeSseMessage(error));
  // The headers leave with the first event when it came with them (one write instead of two, the
  // common case of a POST answered at once); a stream with nothing to say yet gets them one turn later.
  let flushed = exchange.injected.length > 0;
  setImmediate(() => {
    if (!flushed && !res.writableEnded && !res.destroyed) res.flushHeaders();
  });

  const unanswered = new Set(exchange.requestIds.map(idKey));
  const rewriter = new SseRewriter({
    rewrite: (data) => {
      if (data.length === 0 || data.charCodeAt(0) !== 123 /* { */) return undefined;
      const known = exchange.guard.inspectUpstreamText(exchange.sessionKey, data);
      if (known !== undefined) {
        unanswered.delete(idKey(known.id));
        return known.text === data ? undefined : known.text;
      }
      let message: unknown;
      try {
        message = JSON.parse(data);
      } catch {
        return undefined;
      }
      if (isResponse(message)) unanswered.delete(idKey(message.id));
      const replaced = exchange.guard.inspectUpstreamMessage(exchange.sessionKey, message);
      return replaced === undefined ? undefined : JSON.stringify(replaced);
    },
    write: (text) => {
      flushed = true;
      // A large event (a listing) goes as bytes: a string would be measured, then encoded, again.
      res.write(text.length > 65_536 ? Buffer.from(text) : text);
    },
    onError: (error) => {
      onBroken(error);
      upstream.destroy();
    },
  });

  let ended = false;
  let clientGone = false;
  upstream.on('data', (chunk: Buffer) => rewriter.push(chunk));
  upstream.on('end', () => {
    ended = true;
    rewriter.end();
    res.end();
  });
  upstream.on('close', () => {
    if (ended || clientGone || res.writableEnded) return;
    // The upstream died mid-stream: every request it did not answer gets an error, then the stream ends.
    onBroken(new Error('upstream stream closed before it ended'));
    for (const key of unanswered) {
      const id = exchange.requestIds.find((candidate) => idKey(candidate) === key) ?? null;
      res.write(
        encodeSseMessage(
          jsonRpcError(
            id,
            ErrorCodes.UPSTREAM_UNAVAILABLE,
            'toolpin: the upstream closed the stream before answering',
          ),
        ),
      );
    }
    res.end();
  });
  // A client that goes away takes the upstream stream with it.
  res.on('close', () => {
    clientGone = !res.writableEnded;
    if (!upstream.complete) upstream.destroy();
  });
  return {
    end: () => {
      if (res.writableEnded) return;
      ended = true;
      res.end();
      upstream.destroy();
    },
  };
}
