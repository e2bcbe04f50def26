import { redactBytes } from '../../src/wire/redactBytes.js';

/** Pipes `chunks` through the redaction: the chunks that come out, in order (one per chunk in at most, then the flush). */
async function redacted(secret: string, chunks: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of source.pipeThrough(redactBytes(secret, '[redacted]')))
    out.push(decoder.decode(chunk));
  return out;
}

describe('redactBytes', () => {
  it('replaces the secret whole, in one chunk or split across several', async () => {
    expect((await redacted('tok-123', ['a tok-123 b tok-123'])).join('')).toBe('a [redacted] b [redacted]');
    expect((await redacted('tok-123', ['a to', 'k-1', '23 b tok-12'])).join('')).toBe(
      'a [redacted] b tok-12',
    );
    expect((await redacted('aab', ['aaa', 'ab'])).join('')).toBe('aa[redacted]');
  });

  it('holds back only a tail that could begin the secret: an SSE event is passed on with its chunk', async () => {
    const event = 'data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n';
    expect(await redacted('tok-123', [event, 'x tok-', '1'])).toEqual([event, 'x ', 'tok-1']);
  });
});
