import { LineFramer } from '../../src/wire/lineFramer.js';

/** Every line `chunks` make, as text (`<too long>` for a line over the bound). */
function linesOf(framer: LineFramer, chunks: readonly string[]): string[] {
  const lines: string[] = [];
  for (const chunk of chunks)
    framer.push(Buffer.from(chunk, 'utf8'), (line) => {
      lines.push(line === undefined ? '<too long>' : line.toString('utf8'));
      return true;
    });
  return lines;
}

describe('LineFramer', () => {
  it('splits on \\n only, joins a line written in pieces, keeps a last line without its newline', () => {
    expect(linesOf(new LineFramer(100), ['a\r\nb\rc\n', 'd', 'e', '\nf\n\ng'])).toEqual([
      'a\r',
      'b\rc',
      'de',
      'f',
      '',
    ]);
  });

  it('splits at every byte of a multi-byte character alike', () => {
    const text = 'é\u2028😀\n';
    const bytes = Buffer.from(text, 'utf8');
    for (let cut = 0; cut <= bytes.length; cut++) {
      const lines: string[] = [];
      const framer = new LineFramer(100);
      for (const part of [bytes.subarray(0, cut), bytes.subarray(cut)])
        framer.push(part, (line) => (lines.push(String(line?.toString('utf8'))), true));
      expect(lines).toEqual(['é\u2028😀']);
    }
  });

  it('reports a line over the bound once, whether it ends in its chunk or later, and goes on after it', () => {
    expect(linesOf(new LineFramer(4), ['123456\nok\n'])).toEqual(['<too long>', 'ok']);
    expect(linesOf(new LineFramer(4), ['123', '45', '6789', '0\nok\n'])).toEqual(['<too long>', 'ok']);
    expect(linesOf(new LineFramer(4), ['1234\n'])).toEqual(['1234']);
  });

  it('stops handing lines over when the reader says so', () => {
    const seen: string[] = [];
    new LineFramer(10).push(Buffer.from('a\nb\nc\n'), (line) => {
      seen.push(String(line));
      return seen.length < 2;
    });
    expect(seen).toEqual(['a', 'b']);
  });
});
