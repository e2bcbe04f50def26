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

  // Both kinds of body: a web stream (fetch) is cancelled, a node stream (node:http) destroyed.
  it.each([
    [
      'a web stream',
      () => webStream(['a', 'b']),
      (body: unknown) => (body as ReturnType<typeof webStream>).state.cancelled,
    ],
    [
      'a node stream',
      () => ({ stream: Readable.from([Buffer.from('a'), Buffer.from('b')], { objectMode: false }) }),
      (body: unknown) => (body as { stream: Readable }).stream.destroyed,
    ],
  ])('ends %s when the handler throws, and passes the error on', async (_kind, make, ended) => {
    const body = make();
    await expect(
      readBounded(body.stream, 100, () => {
        throw new Error('bad chunk');
      }),
    ).rejects.toThrow('bad chunk');
    expect(ended(body)).toBe(true);
  });

  it('destroys a node stream it leaves before the end', async () => {
    const readable = Readable.from([Buffer.from('abc'), Buffer.from('def'), Buffer.from('ghi')], {
      objectMode: false,
    });
    expect(await readBounded(readable, 4, () => undefined)).toBe('too_large');
    expect(readable.destroyed).toBe(true);
  });

  it('reads a node stream whole by its events, in order, and leaves it to end by itself', async () => {
    const readable = Readable.from([Buffer.from('ab'), Buffer.from('cd')], { objectMode: false });
    const seen: string[] = [];
    const end = await readBounded(readable, 4, (chunk) => void seen.push(Buffer.from(chunk).toString()));
    expect(end).toBe('done');
    expect(seen).toEqual(['ab', 'cd']);
  });

  it('stops a node stream when asked, and destroys it', async () => {
    const readable = Readable.from([Buffer.from('a'), Buffer.from('b'), Buffer.from('c')], {
      objectMode: false,
    });
    const seen: string[] = [];
    const end = await readBounded(readable, 100, (chunk) => {
      seen.push(Buffer.from(chunk).toString());
      return seen.length === 2;
    });
    expect(end).toBe('stopped');
    expect(seen).toEqual(['a', 'b']);
    expect(readable.destroyed).toBe(true);
  });

  it('rejects a node stream that fails or closes before its end, and survives its later errors', async () => {
    const failing = new Readable({ read() {} });
    const failed = readBounded(failing, 100, () => undefined);
    failing.push('partial');
    failing.destroy(new Error('socket hang up'));
    await expect(failed).rejects.toThrow('socket hang up');

    const closing = new Readable({ read() {} });
    const closed = readBounded(closing, 100, () => undefined);
    closing.push('partial');
    closing.destroy();
    await expect(closed).rejects.toThrow('closed before its end');
    // The read is over; an error the stream emits afterwards finds a listener, not the process.
    expect(() => closing.emit('error', new Error('late'))).not.toThrow();
  });
});
