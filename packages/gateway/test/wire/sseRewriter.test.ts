import { SseRewriter } from '../../src/wire/sseRewriter.js';

/** Feeds the chunks through a rewriter that keeps every event, and returns the datas seen and the output. */
function rewrite(chunks: readonly string[]): { datas: string[]; output: string } {
  const datas: string[] = [];
  let output = '';
  const rewriter = new SseRewriter({
    rewrite: (data) => {
      datas.push(data);
      return undefined;
    },
    write: (text) => (output += text),
  });
  for (const chunk of chunks) rewriter.push(Buffer.from(chunk));
  return { datas, output };
}

describe('SseRewriter line endings', () => {
  it.each([
    ['LF', ['data: {"a":1}\n\ndata: {"b":2}\n\n']],
    ['CRLF', ['data: {"a":1}\r\n\r\ndata: {"b":2}\r\n\r\n']],
    ['CR alone', ['data: {"a":1}\r\rdata: {"b":2}\r\r']],
    ['CRLF split between chunks', ['data: {"a":1}\r', '\n\r', '\ndata: {"b":2}\r\n\r', '\n']],
    ['CR at the end of each chunk', ['data: {"a":1}\r', '\r', 'data: {"b":2}\r', '\r']],
  ])('dispatches every event with %s as soon as its blank line arrives', (_what, chunks) => {
    const { datas, output } = rewrite(chunks);
    expect(datas).toEqual(['{"a":1}', '{"b":2}']);
    expect(output).toBe('data: {"a":1}\n\ndata: {"b":2}\n\n');
  });

  it('does not take an LF long after a CR line ending for a blank line', () => {
    const { datas } = rewrite(['data: {"a":1}\r', '\ndata: {"b":2}\n', '\n']);
    expect(datas).toEqual(['{"a":1}\n{"b":2}']);
  });
});
