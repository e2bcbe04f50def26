import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';

/** A body-parser-shaped error, so one error handler answers both readers' refusals. */
export type BodyError = Error & { status: number; type: string };

/**
 * Reads an uncompressed request body whole, bounded by `limit` bytes, with raw-body (what
 * `express.raw` uses, minus the type matching and inflation the gateway does not need here), and
 * hands it to `done` (a callback: no promise between the body's last byte and its decision).
 * Refuses like body-parser: 413 `entity.too.large` past the limit (at once when Content-Length
 * says so), 400 `request.aborted` when the client leaves mid-body.
 */
export function readRequestBody(
  req: IncomingMessage,
  limit: number,
  done: (error: BodyError | undefined, body: Buffer) => void,
): void {
  const length = req.headers['content-length'];
  getRawBody(req, length === undefined ? { limit } : { limit, length }, (error, body) => {
    if (error === null || error === undefined) return done(undefined, body);
    // Keep draining what the client still sends, so it reads the answer.
    req.resume();
    done(error as BodyError, Buffer.alloc(0));
  });
}

/** True when the body is sent as is (no Content-Encoding other than identity). */
export function isIdentityEncoded(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  return encoding === undefined || encoding.trim().toLowerCase() === 'identity';
}
