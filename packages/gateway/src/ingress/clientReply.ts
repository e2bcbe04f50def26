import type { ServerResponse } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { acceptsJson } from '../wire/httpHeaders.js';
import { encodeSseMessage } from '../wire/sseEncode.js';

/** Answers the client directly, in the framing it asked for: JSON, or one SSE event per message. */
export function replyToClient(
  headers: IncomingHttpHeaders,
  res: ServerResponse,
  status: number,
  payload: unknown,
): void {
  if (acceptsJson(headers) || status !== 200) {
    replyJson(res, status, payload);
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  for (const message of Array.isArray(payload) ? payload : [payload]) res.write(encodeSseMessage(message));
  res.end();
}

/** Answers with one JSON body (every front's refusals: 400, 404, 405, 415, 429, 502, 503). */
export function replyJson(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
