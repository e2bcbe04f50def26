import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCodes } from '../wire/errorCodes.js';
import { responseHeadersFrom } from '../wire/httpHeaders.js';
import { jsonRpcError } from '../wire/jsonRpc.js';
import type { Exchange } from './exchange.js';

/** Reads a whole JSON body, bounded: a listing is one value and must be parsed whole to be verified. */
async function readBounded(upstream: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of upstream) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new Error(`upstream JSON response exceeds ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function inspect(exchange: Exchange, value: unknown): unknown {
  return exchange.guard.inspectUpstreamMessage(exchange.sessionKey, value) ?? value;
}

/**
 * Verifies a JSON answer that carries a tools/list result (or must take refused batch members),
 * and sends the client the re-serialized verified value.
 */
export async function relayJsonResponse(
  exchange: Exchange,
  upstream: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
): Promise<void> {
  const raw = await readBounded(upstream, maxBytes);
  const text = raw.toString('utf8');
  // A single compact response (the usual listing) is inspected from its text, and a listing
  // verified before is not parsed again (see ServerGuard.inspectUpstreamText).
  const known =
    exchange.injected.length === 0
      ? exchange.guard.inspectUpstreamText(exchange.sessionKey, text)
      : undefined;
  if (known !== undefined) {
    sendJson(upstream, res, known.text === text ? raw : known.text);
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  let out: unknown;
  if (value === undefined) {
    // Not JSON where a listing was expected: nothing can be verified (fail closed unless monitoring).
    if (exchange.guard.config.mode === 'monitor' || !exchange.hasList) {
      res.writeHead(upstream.statusCode ?? 200, responseHeadersFrom(upstream.headers, false));
      res.end(raw);
      return;
    }
    const errors = exchange.requestIds.map((id) =>
      jsonRpcError(
        id,
        ErrorCodes.PIN_POLICY_BLOCKED,
        'toolpin blocked the listing: the upstream answer is not valid JSON',
        {
          reason: 'unverifiable',
          server: exchange.guard.config.name,
        },
      ),
    );
    out = exchange.batch ? errors : errors[0];
  } else if (Array.isArray(value)) {
    out = [...value.map((message) => inspect(exchange, message)), ...exchange.injected];
  } else {
    const inspected = inspect(exchange, value);
    out = exchange.injected.length > 0 ? [inspected, ...exchange.injected] : inspected;
  }
  sendJson(upstream, res, JSON.stringify(out));
}

function sendJson(upstream: IncomingMessage, res: ServerResponse, body: string | Buffer): void {
  const headers = responseHeadersFrom(upstream.headers, true);
  headers['content-type'] = 'application/json';
  headers['content-length'] = Buffer.byteLength(body);
  res.writeHead(upstream.statusCode ?? 200, headers);
  res.end(body);
}
