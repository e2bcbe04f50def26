import fc from 'fast-check';
import { matchResultEnvelope } from '../../src/wire/resultEnvelope.js';

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
