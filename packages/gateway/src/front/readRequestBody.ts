import type { IncomingMessage } from 'node:http';

/** A body-parser-shaped error, so one error handler answers both readers' refusals. */
export type BodyError = Error & { status: number; type: string };

function bodyError(status: number, type: string, message: string): BodyError {
  return Object.assign(new Error(message), { status, type });
}

/**
 * Reads an uncompressed request body whole, bounded by `limit` bytes: what `express.raw` does for
 * the gateway, minus the layers it needs for what the gateway never uses (type matching, charsets,
 * inflation). Rejects like body-parser: 413 `entity.too.large` past the limit (at once when
 * Content-Length says so), 400 `request.aborted` when the client leaves mid-body.
 */
export function readRequestBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (declared > limit) {
      req.resume();
      reject(bodyError(413, 'entity.too.large', 'request entity too large'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      // Past the limit: keep draining what the client still sends, so it reads the 413.
      settled = true;
      chunks.length = 0;
      req.off('data', onData);
      req.resume();
      reject(bodyError(413, 'entity.too.large', 'request entity too large'));
    };
    req.on('data', onData);
    req.once('end', () => {
      if (settled) return;
      settled = true;
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
    req.once('close', () => {
      if (settled) return;
      settled = true;
      reject(bodyError(400, 'request.aborted', 'request aborted'));
    });
  });
}

/** True when the body is sent as is (no Content-Encoding other than identity). */
export function isIdentityEncoded(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  return encoding === undefined || encoding.trim().toLowerCase() === 'identity';
}
