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
export async function readBounded(
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
