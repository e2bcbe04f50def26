import type { ServerResponse } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { acceptsJson } from '../wire/httpHeaders.js';
import { jsonRpcError, parseJsonRpcBody } from '../wire/jsonRpc.js';
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

/**
 * The messages of a front's POST as an SDK server transport takes them (one message, or a batch's
 * array), parsed once by the gateway; a body that is not JSON-RPC is answered 400 here (undefined).
 */
export function postedMessages(raw: unknown, res: ServerResponse): { readonly body: unknown } | undefined {
  const parsed = parseJsonRpcBody(Buffer.isBuffer(raw) ? raw.toString('utf8') : '');
  if (!parsed.ok) {
    replyJson(res, 400, jsonRpcError(parsed.id, parsed.code, parsed.message, parsed.data));
    return undefined;
  }
  return { body: parsed.body.batch ? parsed.body.messages : parsed.body.messages[0] };
}
