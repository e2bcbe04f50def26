import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { idKey, isResponse, type JsonRpcResponse } from '../wire/jsonRpc.js';
import { readBounded, type BoundedReadEnd } from '../wire/readBounded.js';
import { newDeadline, type DeadlineWheel } from './deadlineWheel.js';
import { upstreamFailure, type Exchange, type UpstreamFailureReason } from './exchange.js';

/** The bounds of an upstream body: its size, the silence allowed, and the wheel that times it. */
export interface BodyLimits {
  readonly maxBytes: number;
  readonly idleMs: number;
  readonly wheel: DeadlineWheel;
}

/** Why reading an upstream body failed, as the reason of the errors the client receives. */
export class UpstreamBodyError extends Error {
  constructor(
    readonly reason: UpstreamFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamBodyError';
  }
}

/** A whole upstream body as it arrived: its chunks, and their length in all. */
interface UpstreamBody {
  readonly chunks: Buffer[];
  readonly length: number;
}

/**
 * Reads a whole upstream body, bounded: a JSON answer is one value and must be parsed whole to be
 * decided on. A body cut short (the connection closed before its Content-Length or final chunk)
 * is an error, never a shorter answer. The chunks are not joined here: a listing verified before
 * is recognized in them as they are (joining a large listing's chunks is one more copy of it, off
 * V8's heap, per listing: docs/benchmark.md, run I).
 */
async function readUpstreamBody(upstream: IncomingMessage, limits: BodyLimits): Promise<UpstreamBody> {
  const { maxBytes, idleMs, wheel } = limits;
  const chunks: Buffer[] = [];
  let length = 0;
  let idle = false;
  const deadline = newDeadline(() => {
    idle = true;
    upstream.destroy(new Error(`nothing received for ${idleMs} ms`));
  });
  wheel.arm(deadline, idleMs);
  let end: BoundedReadEnd;
  try {
    end = await readBounded(upstream, maxBytes, (chunk) => {
      wheel.arm(deadline, idleMs);
      chunks.push(chunk as Buffer);
      length += chunk.byteLength;
    });
  } catch (error) {
    if (idle)
      throw new UpstreamBodyError('timeout', `the upstream sent nothing of its answer for ${idleMs} ms`);
    throw new UpstreamBodyError(
      'closed',
      `the upstream closed the connection mid-answer (${(error as Error).message})`,
    );
  } finally {
    wheel.disarm(deadline);
  }
  if (end === 'too_large')
    throw new UpstreamBodyError('too_large', `the upstream answer exceeds ${maxBytes} bytes`);
  if (!upstream.complete)
    throw new UpstreamBodyError('closed', 'the upstream closed the connection mid-answer');
  return { chunks, length };
}

/**
 * Waits for the end of an upstream body that must be empty (no media type was given for it): its
 * first byte is a body the gateway cannot parse, refused at once, and so is silence past `idleMs`.
 */
export function expectNoBody(upstream: IncomingMessage, limits: BodyLimits): Promise<void> {
  const { idleMs, wheel } = limits;
  return new Promise((resolve, reject) => {
    const refuse = (error: UpstreamBodyError): void => {
      wheel.disarm(deadline);
      upstream.destroy();
      reject(error);
    };
    const deadline = newDeadline(() =>
      refuse(new UpstreamBodyError('timeout', `the upstream sent nothing of its answer for ${idleMs} ms`)),
    );
    wheel.arm(deadline, idleMs);
    upstream.once('data', () =>
      refuse(new UpstreamBodyError('media_type', 'the upstream answered with a body of no media type')),
    );
    upstream.once('end', () => {
      wheel.disarm(deadline);
      if (upstream.complete) resolve();
      else reject(new UpstreamBodyError('closed', 'the upstream closed the connection mid-answer'));
    });
    upstream.once('error', (error) =>
      refuse(
        new UpstreamBodyError('closed', `the upstream closed the connection mid-answer (${error.message})`),
      ),
    );
  });
}

/**
 * Decides a JSON answer: parsed, every message validated and inspected (listings verified), and
 * the client receives the gateway's serialization of the result, with refused batch members
 * beside the upstream's answers. An empty body (a 202 or a DELETE's 200) stays empty
 * (sendAccepted), unless a sessionless exchange forwarded requests.
 */
export async function relayJsonResponse(
  exchange: Exchange,
  upstream: IncomingMessage,
  res: ServerResponse,
  headers: OutgoingHttpHeaders,
  limits: BodyLimits,
): Promise<void> {
  const read = await readUpstreamBody(upstream, limits);
  const status = upstream.statusCode ?? 502;
  if (read.length === 0) {
    sendAccepted(exchange, res, status, headers);
    return;
  }
  const only = exchange.requestIds.length === 1 ? exchange.requestIds[0] : undefined;
  if (exchange.refused.length === 0 && !exchange.batch && only !== undefined && only !== null) {
    // A listing verified before, recognized by its bytes: the envelope around the shared verified bytes.
    const { checkpoint, sessionKey, answers } = exchange;
    const known = checkpoint.knownListingBytes(sessionKey, read.chunks, read.length, answers, only);
    if (known !== undefined) {
      sendJsonParts(res, status, headers, known.parts);
      return;
    }
  }
  const raw = read.chunks.length === 1 ? (read.chunks[0] as Buffer) : Buffer.concat(read.chunks, read.length);
  const text = raw.toString('utf8');
  const verdict = exchange.checkpoint.inspectUpstreamText(exchange.sessionKey, text, exchange.answers);
  if (!verdict.ok) throw new UpstreamBodyError(verdict.reason, `the upstream answer is ${verdict.problem}`);
  // A successful JSON answer carries the answers of every request forwarded: one it left out
  // gets an error rather than an endless wait.
  const out =
    status >= 200 && status < 300 ? [...verdict.out, ...unanswered(exchange, verdict.out)] : verdict.out;
  let body: string | Buffer;
  if (verdict.text !== undefined && out.length === 1 && exchange.refused.length === 0)
    // A listing verified before and unchanged is answered with the very text the gateway's own
    // serialization gives: those are the bytes it read (no second encoding of a large listing),
    // when they are well-formed UTF-8. Other bytes were read with replacement characters: the
    // client gets the text the gateway decided on, encoded by the gateway.
    body = verdict.text === text && isUtf8(raw) ? raw : verdict.text;
  else if (verdict.batch || exchange.refused.length > 0 || out.length !== 1)
    body = JSON.stringify([...out, ...exchange.refused]);
  else body = JSON.stringify(out[0]);
  sendJson(res, status, headers, body);
}

/**
 * Errors for the forwarded requests that no response in `out` answers and that are still owed an
 * answer (one answered on another stream of the session is not answered again).
 */
function unanswered(exchange: Exchange, out: readonly unknown[]): JsonRpcResponse[] {
  if (exchange.requestIds.length === 0) return [];
  const answered = new Set(out.filter(isResponse).map((message) => idKey(message.id)));
  const left = exchange.requestIds.filter((id) => !answered.has(idKey(id)));
  return exchange.checkpoint
    .forgetAnswers(exchange.sessionKey, left, exchange.answers)
    .map((id) =>
      upstreamFailure(
        exchange,
        id,
        'unanswered',
        'toolpin: the upstream answer left this request unanswered',
      ),
    );
}

/**
 * Answers an upstream reply that carried no message (202 Accepted for notifications, a DELETE's
 * 200): nothing to relay but its status, or the refused batch members when there were some. A
 * success without a message to a sessionless exchange that forwarded requests is refused (thrown):
 * its answers can come on this response only (its own book), so the bare status would leave the
 * client waiting for answers that never come. In a session they may still come on its GET stream,
 * where they are matched in the session's book (servers that answer every request there exist).
 */
export function sendAccepted(
  exchange: Exchange,
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
): void {
  const requests = exchange.requestIds.length;
  if (status < 300 && requests > 0 && exchange.answers !== undefined)
    throw new UpstreamBodyError(
      'unanswered',
      `the upstream answered HTTP ${status} with no message to ${requests === 1 ? 'a request' : `${requests} requests`}`,
    );
  if (exchange.refused.length > 0) {
    sendJson(res, 200, headers, JSON.stringify(exchange.batch ? exchange.refused : exchange.refused[0]));
    return;
  }
  res.writeHead(status, headers);
  res.end();
}

/** Sends the gateway's JSON body in pieces (written at once, none copied), framed by the gateway. */
function sendJsonParts(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  parts: readonly (string | Buffer)[],
): void {
  let length = 0;
  for (const part of parts) length += Buffer.byteLength(part);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': length });
  res.cork();
  for (const part of parts) res.write(part);
  res.end();
  res.uncork();
}

/** Sends the gateway's JSON body, framed by the gateway. */
export function sendJson(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: string | Buffer,
): void {
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
