import { Readable } from 'node:stream';

/** How {@link readBounded} ended. */
export type BoundedReadEnd = 'done' | 'stopped' | 'too_large';

/**
 * Reads a body chunk by chunk, never more than `maxBytes` in all: the one bounded reader for the
 * upstream answers the gateway reads whole or until it finds what it needs (a fetch body, a
 * node:http message). Each chunk goes to `onChunk`, which returns true to stop reading. Returns
 * `done` at the end of the body, `stopped`, or `too_large` as soon as the bound is passed (that
 * chunk is not handed on). Whenever it leaves before the end (stopped, too large, or an error
 * thrown by `onChunk`), the body is ended: a web stream cancelled, a node stream destroyed.
 */
export function readBounded(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  onChunk: (chunk: Uint8Array) => boolean | void,
): Promise<BoundedReadEnd> {
  return body instanceof Readable
    ? readNodeStream(body, maxBytes, onChunk)
    : readIterable(body, maxBytes, onChunk);
}

async function readIterable(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  onChunk: (chunk: Uint8Array) => boolean | void,
): Promise<BoundedReadEnd> {
  const chunks = body[Symbol.asyncIterator]();
  let size = 0;
  let ended = false;
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done === true) {
        ended = true;
        return 'done';
      }
      size += next.value.byteLength;
      if (size > maxBytes) return 'too_large';
      if (onChunk(next.value) === true) return 'stopped';
    }
  } finally {
    if (!ended) await chunks.return?.().catch(() => undefined);
  }
}

/**
 * A node stream (an upstream's http.IncomingMessage on every JSON answer the proxy relays) read by
 * its own events: its async iterator costs a promise and a round of listeners per chunk, a tenth
 * of the gateway's own work per call (docs/benchmark.md, run J). Same contract: an error, or a
 * close before the end, rejects; the stream is destroyed whenever the read leaves before its end.
 */
function readNodeStream(
  body: Readable,
  maxBytes: number,
  onChunk: (chunk: Uint8Array) => boolean | void,
): Promise<BoundedReadEnd> {
  return new Promise((resolve, reject) => {
    let size = 0;
    let settled = false;
    const leave = (end: BoundedReadEnd | Error): void => {
      if (settled) return;
      settled = true;
      if (end !== 'done') body.destroy();
      if (end instanceof Error) reject(end);
      else resolve(end);
    };
    body.on('data', (chunk: Uint8Array) => {
      if (settled) return;
      size += chunk.byteLength;
      if (size > maxBytes) return leave('too_large');
      let stop: boolean | void;
      try {
        stop = onChunk(chunk);
      } catch (error) {
        return leave(error as Error);
      }
      if (stop === true) leave('stopped');
    });
    body.on('end', () => leave('done'));
    // Stays attached once the read is over: a later error of the destroyed stream is not a crash.
    body.on('error', (error) => leave(error));
    // 'close' follows every 'end': an error is made only for a close that comes first.
    body.on('close', () => settled || leave(new Error('the stream closed before its end')));
  });
}
