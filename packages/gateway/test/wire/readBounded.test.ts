import { Readable } from 'node:stream';
import { readBounded } from '../../src/wire/readBounded.js';

/** A web stream of these chunks that records whether it was cancelled. */
function webStream(chunks: readonly string[]) {
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[state.pulled++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(chunk));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe('readBounded, the one bounded body reader', () => {
  it('hands on every chunk of a body within the bound and ends with done', async () => {
    const { stream, state } = webStream(['ab', 'cd', 'e']);
    const seen: string[] = [];
    const end = await readBounded(stream, 5, (chunk) => void seen.push(Buffer.from(chunk).toString()));
    expect(end).toBe('done');
    expect(seen).toEqual(['ab', 'cd', 'e']);
    expect(state.cancelled).toBe(false);
  });

  it('stops at the chunk that passes the bound, without handing it on, and cancels a web stream', async () => {
    const { stream, state } = webStream(['ab', 'cd', 'ef', 'gh']);
    const seen: string[] = [];
    const end = await readBounded(stream, 5, (chunk) => void seen.push(Buffer.from(chunk).toString()));
    expect(end).toBe('too_large');
    expect(seen).toEqual(['ab', 'cd']);
    expect(state.cancelled).toBe(true);
  });

  it('stops when asked and cancels the rest', async () => {
    const { stream, state } = webStream(['a', 'b', 'c']);
    const end = await readBounded(stream, 100, (chunk) => Buffer.from(chunk).toString() === 'a');
    expect(end).toBe('stopped');
    expect(state.cancelled).toBe(true);
  });

  it('ends the body when the handler throws, and passes the error on', async () => {
    const { stream, state } = webStream(['a', 'b']);
    await expect(
      readBounded(stream, 100, () => {
        throw new Error('bad chunk');
      }),
    ).rejects.toThrow('bad chunk');
    expect(state.cancelled).toBe(true);
  });

  it('destroys a node stream it leaves before the end', async () => {
    const readable = Readable.from([Buffer.from('abc'), Buffer.from('def'), Buffer.from('ghi')], {
      objectMode: false,
    });
    expect(await readBounded(readable, 4, () => undefined)).toBe('too_large');
    expect(readable.destroyed).toBe(true);
  });
});
