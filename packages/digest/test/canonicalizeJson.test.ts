import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { DigestError, MAX_CANONICAL_DEPTH, canonicalizeJson, digestCatalog } from '../src/index.js';

const unicodeKey = fc.string({ unit: 'grapheme', maxLength: 6 });
const edgeNumber = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    0,
    -0,
    5e-324,
    -5e-324,
    1e21,
    1e-7,
    1.7976931348623157e308,
    -1e300,
    123456789012345680000,
    0.1,
  ),
  fc.integer(),
);
const jsonWithUnicodeKeys = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    edgeNumber,
    fc.string({ unit: 'grapheme' }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value')),
    fc.dictionary(unicodeKey, tie('value')),
  ),
})).value;

function notCanonicalReason(value: unknown): string | undefined {
  try {
    canonicalizeJson(value);
  } catch (error) {
    expect(error).toBeInstanceOf(DigestError);
    expect((error as DigestError).code).toBe('DIGEST_NOT_CANONICAL');
    return (error as DigestError).data.reason;
  }
  return undefined;
}

describe('canonicalizeJson', () => {
  it('matches the canonicalize package byte for byte on random JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalizeJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 500 },
    );
  });

  it('matches the canonicalize package on objects with unicode keys and extreme numbers', () => {
    fc.assert(
      fc.property(jsonWithUnicodeKeys, (value) => {
        expect(canonicalizeJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 500 },
    );
  });

  it('writes RFC 8785 numbers: -0 as 0, exponents as ECMAScript does', () => {
    expect(canonicalizeJson([-0, 1e21, 1e-7, 5e-324, 0.1, 100])).toBe('[0,1e+21,1e-7,5e-324,0.1,100]');
  });

  it('sorts members by UTF-16 code units, not code points', () => {
    // U+1F600 is a surrogate pair starting 0xD83D, which sorts before U+FB01 (0xFB01).
    expect(canonicalizeJson({ '\uFB01': 1, '\u{1F600}': 2, a: 3 })).toBe('{"a":3,"\u{1F600}":2,"\uFB01":1}');
  });

  it('escapes only what JSON requires', () => {
    expect(canonicalizeJson('a"b\\c\n\t\u0001\u007f\u2028é')).toBe('"a\\"b\\\\c\\n\\t\\u0001\u007f\u2028é"');
  });

  it('omits undefined members, as a JSON round trip does', () => {
    expect(canonicalizeJson({ b: undefined, a: 1 })).toBe('{"a":1}');
  });

  it.each([
    ['NaN', NaN, 'NaN is not allowed'],
    ['Infinity', Infinity, 'Infinity is not allowed'],
    ['-Infinity', { x: [-Infinity] }, 'Infinity is not allowed'],
    ['a lone high surrogate in a value', { a: 'x\uD800' }, 'lone surrogate is not allowed'],
    ['a lone low surrogate in a value', ['\uDC00y'], 'lone surrogate is not allowed'],
    ['a lone surrogate in a key', { 'k\uDBFF': 1 }, 'lone surrogate is not allowed'],
    ['a bigint', { n: 1n }, 'a bigint is not a JSON value'],
    ['a function', { f: () => 1 }, 'a function is not a JSON value'],
    ['undefined in an array', [undefined], 'undefined is not a JSON value'],
  ])('rejects %s with DIGEST_NOT_CANONICAL', (_label, value, reason) => {
    expect(notCanonicalReason(value)).toBe(reason);
  });

  it('rejects a circular structure with DIGEST_TOO_DEEP instead of overflowing the stack', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => canonicalizeJson(cycle)).toThrow(expect.objectContaining({ code: 'DIGEST_TOO_DEEP' }));
  });

  /** `depth` arrays nested in one another, built without recursion: [[[…]]]. */
  function nested(depth: number): unknown {
    let value: unknown = [];
    for (let level = 1; level < depth; level++) value = [value];
    return value;
  }

  it('canonicalizes a value nested exactly MAX_CANONICAL_DEPTH levels', () => {
    expect(canonicalizeJson(nested(MAX_CANONICAL_DEPTH))).toBe(
      '['.repeat(MAX_CANONICAL_DEPTH) + ']'.repeat(MAX_CANONICAL_DEPTH),
    );
  });

  it.each([MAX_CANONICAL_DEPTH + 1, 20_000])(
    'rejects a value nested %i levels with DIGEST_TOO_DEEP, without touching the stack limit',
    (depth) => {
      const value = { a: nested(depth - 1) };
      expect(() => canonicalizeJson(value)).toThrow(
        expect.objectContaining({
          code: 'DIGEST_TOO_DEEP',
          data: { reason: `nested deeper than ${MAX_CANONICAL_DEPTH} levels (or circular)` },
        }),
      );
    },
  );

  it('names the tool nested too deeply in a catalog, counting the tool object as level 1', () => {
    const fits = { name: 'fits', inputSchema: nested(MAX_CANONICAL_DEPTH - 1) };
    const deep = { name: 'deep', inputSchema: nested(MAX_CANONICAL_DEPTH) };
    expect(digestCatalog([fits]).entries).toHaveProperty(['tool:fits']);
    let thrown: unknown;
    try {
      digestCatalog([fits, deep]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DigestError);
    expect(thrown).toMatchObject({ code: 'DIGEST_TOO_DEEP', data: { index: 1, name: 'deep' } });
    expect((thrown as Error).message).toMatch(
      /^tool "deep" at index 1 has no digest: .*nested deeper than 256/,
    );
  });

  it('accepts a well-formed surrogate pair', () => {
    expect(canonicalizeJson({ '\u{1F642}': '\u{1F642}' })).toBe('{"\u{1F642}":"\u{1F642}"}');
  });
});
