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

/** What a rewriter writes for a stream fed as text (the general parser alone), keeping or replacing every data. */
function viaGeneral(stream: string): { datas: string[]; output: string } {
  const datas: string[] = [];
  let output = '';
  const rewriter = new SseRewriter({
    rewrite: (data) => (datas.push(data), data === 'drop' ? null : undefined),
    write: (text) => (output += text),
  });
  rewriter.push(stream);
  rewriter.end();
  return { datas, output };
}

/** The same stream fed as bytes in `size`-byte chunks: simple events take the byte path. */
function viaBytes(stream: Buffer, size: number, bytesRewrite = false): { datas: string[]; output: string } {
  const datas: string[] = [];
  let output = '';
  const rewriter = new SseRewriter({
    rewrite: (data) => (datas.push(data), data === 'drop' ? null : undefined),
    write: (text) => (output += text),
    rewriteBytes: (slices, length) => {
      const data = Buffer.concat(slices, length).toString();
      if (!bytesRewrite || !data.startsWith('{')) return undefined;
      datas.push(data);
      return [Buffer.from(data)];
    },
    writeParts: (parts) => (output += parts.map((part) => part.toString()).join('')),
  });
  for (let at = 0; at < stream.length; at += size) rewriter.push(stream.subarray(at, at + size));
  rewriter.end();
  return { datas, output };
}

describe('SseRewriter byte path', () => {
  it.each([
    ['simple events', 'event: message\ndata: {"a":1}\n\ndata: {"b":"\u00e9\u{1F600}"}\n\n'],
    ['a dropped event', 'data: drop\n\ndata: {"a":1}\n\n'],
    ['an empty data line', 'data: \n\ndata: {"a":1}\n\n'],
    ['two data lines', 'data: {"a":\ndata: 1}\n\n'],
    [
      'an id, a comment and a retry between simple events',
      'data: {"a":1}\n\nid: 7\ndata: {"b":2}\n\n: ping\n\nretry: 10\n\ndata: {"c":3}\n\n',
    ],
    ['another event type', 'event: heartbeat\ndata: {"a":1}\n\nevent: message\ndata: {"b":2}\n\n'],
    ['CR line endings after a simple event', 'data: {"a":1}\n\ndata: {"b":2}\r\n\r\ndata: {"c":3}\r\r'],
    ['a BOM at the start', '\uFEFFdata: {"a":1}\n\n'],
    [
      'a BOM after a simple event (a field no reader knows)',
      'data: {"a":1}\n\n\uFEFFdata: {"b":2}\n\ndata: {"c":3}\n\n',
    ],
    ['an event left without its blank line', 'data: {"a":1}\n\ndata: {"b":2}\n'],
    ['an event cut mid-line', 'data: {"a":1}\n\ndata: {"b"'],
  ])('reads %s exactly as the general parser does, in any chunking', (_what, stream) => {
    const expected = viaGeneral(stream);
    const bytes = Buffer.from(stream);
    for (const size of [1, 2, 3, 5, 8, 13, bytes.length]) {
      expect(viaBytes(bytes, size)).toEqual(expected);
      expect(viaBytes(bytes, size, true).output).toBe(expected.output);
    }
  });

  it('leaves data that is not UTF-8 to the decoder of the general path', () => {
    const stream = Buffer.concat([
      Buffer.from('data: {"a":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}\n\n'),
    ]);
    const rewriter = (size: number): string[] => viaBytes(stream, size).datas;
    expect(rewriter(stream.length)).toEqual(['{"a":"\uFFFD("}']);
    expect(rewriter(1)).toEqual(rewriter(stream.length));
  });
});
