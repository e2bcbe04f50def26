import fc from 'fast-check';
import { matchResultEnvelope, matchResultEnvelopeBytes } from '../../src/wire/resultEnvelope.js';

const ids = fc.oneof(
  fc.integer({ min: -1e15 + 1, max: 1e15 - 1 }),
  fc.stringMatching(/^[A-Za-z0-9_.:-]{0,20}$/),
);

describe('matchResultEnvelope', () => {
  it('finds the result text in both compact key orders, and wraps another result the way JSON.stringify would', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), ids, fc.boolean(), (result, other, id, resultFirst) => {
        const message = resultFirst ? { result, jsonrpc: '2.0', id } : { jsonrpc: '2.0', id, result };
        const envelope = matchResultEnvelope(JSON.stringify(message));
        expect(envelope).toBeDefined();
        expect(envelope?.id).toBe(id);
        expect(envelope?.resultText).toBe(JSON.stringify(result));
        const replaced = resultFirst
          ? { result: other, jsonrpc: '2.0', id }
          : { jsonrpc: '2.0', id, result: other };
        expect(envelope?.wrap(JSON.stringify(other))).toBe(JSON.stringify(replaced));
      }),
    );
  });

  it.each([
    ['an error response', '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}'],
    ['a request', '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'],
    ['a notification', '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'],
    ['another key order', '{"id":1,"jsonrpc":"2.0","result":{}}'],
    ['whitespace between members', '{"result":{}, "jsonrpc":"2.0","id":1}'],
    ['a trailing newline', '{"result":{},"jsonrpc":"2.0","id":1}\n'],
    ['an id that is not in its serialized form', '{"result":{},"jsonrpc":"2.0","id":1.0}'],
    ['an id past the exact integers', '{"result":{},"jsonrpc":"2.0","id":12345678901234567890}'],
    ['an escaped string id', '{"result":{},"jsonrpc":"2.0","id":"a\\"b"}'],
    ['a null id', '{"result":{},"jsonrpc":"2.0","id":null}'],
    ['a batch', '[{"result":{},"jsonrpc":"2.0","id":1}]'],
  ])('does not recognize %s', (_what, text) => {
    expect(matchResultEnvelope(text)).toBeUndefined();
  });

  it.each([
    ['before the tail', '{"result":{"tools":[]},"x":1,"jsonrpc":"2.0","id":1}', '{"tools":[]},"x":1'],
    ['after the result', '{"jsonrpc":"2.0","id":1,"result":{},"x":1}', '{},"x":1'],
  ])(
    'leaves to the caller a result text that is not one JSON value (a member %s)',
    (_where, text, resultText) => {
      const envelope = matchResultEnvelope(text);
      expect(envelope?.resultText).toBe(resultText);
      expect(() => JSON.parse(envelope?.resultText ?? '')).toThrow();
    },
  );
});

/** The bytes of `text` cut at the given offsets (sorted, deduplicated): the slices a body may arrive in. */
function sliced(text: string, cuts: readonly number[]): Buffer[] {
  const bytes = Buffer.from(text);
  const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const slices: Buffer[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    if (cut > from) slices.push(bytes.subarray(from, cut));
    from = Math.max(from, cut);
  }
  return slices;
}

describe('matchResultEnvelopeBytes', () => {
  it('finds what matchResultEnvelope finds in the text, however the bytes are sliced (a last or first slice of a few bytes too)', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        ids,
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 1, max: 8 }),
        (result, id, resultFirst, cuts, edgeBytes) => {
          const message = resultFirst ? { result, jsonrpc: '2.0', id } : { jsonrpc: '2.0', id, result };
          const text = JSON.stringify(message);
          const length = Buffer.byteLength(text);
          // Slices of a few bytes at either end: the envelope spans several of them.
          const slices = sliced(text, [...cuts, edgeBytes, length - edgeBytes]);
          const envelope = matchResultEnvelopeBytes(slices, length);
          expect(envelope?.id).toBe(id);
          const whole = Buffer.concat(slices);
          const resultText = whole.subarray(envelope?.resultStart, envelope?.resultEnd).toString('utf8');
          expect(resultText).toBe(JSON.stringify(result));
          expect(`${envelope?.prefix}${resultText}${envelope?.suffix}`).toBe(text);
        },
      ),
    );
  });
});
