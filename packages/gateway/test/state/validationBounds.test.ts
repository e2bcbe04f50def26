import { Ajv2020 } from 'ajv/dist/2020.js';
import { PinnedSchemas } from '../../src/state/pinnedSchemas.js';
import { re2Spelling } from '../../src/state/linearRegExp.js';
import { exceededBudget, usesUniqueItems } from '../../src/state/validationBudget.js';
import { DEFAULT_MAX_CHECKED_BYTES, DEFAULT_MAX_UNIQUE_ITEMS_WORK } from '../../src/defaults.js';
import type { ServerConfig } from '../../src/config/index.js';
import { pinnedConfig } from '../policy/pinnedTools.js';

function pinOf(inputSchema: unknown): ServerConfig {
  return pinnedConfig([{ name: 't', inputSchema }]);
}

function check(inputSchema: unknown, value: unknown, schemas = new PinnedSchemas()) {
  return schemas.check(pinOf(inputSchema), 'tool:t', 'input', value);
}

// The pattern of finding 4: a backtracking engine takes seconds on 28 characters and a mismatch.
const NESTED_QUANTIFIER = '^([a-zA-Z0-9_.-]+/?)+$';
const HOSTILE_TEXT = `${'a'.repeat(28)}!`;

describe('PinnedSchemas: patterns run on a linear-time engine', () => {
  it('checks the nested-quantifier pattern of finding 4 without backtracking', () => {
    const schema = { type: 'object', properties: { path: { type: 'string', pattern: NESTED_QUANTIFIER } } };
    // Far past where a backtracking engine would never return: 4,000 characters and a mismatch.
    expect(check(schema, { path: `${'a'.repeat(4000)}!` })).toEqual({
      kind: 'misfit',
      problems: [{ pointer: '/path', keyword: 'pattern' }],
    });
    expect(check(schema, { path: HOSTILE_TEXT })).toMatchObject({ kind: 'misfit' });
    expect(check(schema, { path: 'src/lib/file.ts' })).toEqual({ kind: 'fits' });
  });

  it('applies patternProperties keys on the same engine', () => {
    const schema = {
      type: 'object',
      patternProperties: { [NESTED_QUANTIFIER]: { type: 'number' } },
      additionalProperties: false,
    };
    expect(check(schema, { 'a/b': 1 })).toEqual({ kind: 'fits' });
    expect(check(schema, { [HOSTILE_TEXT]: 1 }).kind).toBe('misfit');
  });

  it('keeps two patterns apart when one validator instance compiles both', () => {
    const schemas = new PinnedSchemas();
    const a = { type: 'object', properties: { x: { type: 'string', pattern: '^a+$' } } };
    const b = { type: 'object', properties: { x: { type: 'string', pattern: '^b+$' } } };
    expect(check(a, { x: 'aaa' }, schemas).kind).toBe('fits');
    expect(check(b, { x: 'aaa' }, schemas).kind).toBe('misfit');
    expect(check(b, { x: 'bbb' }, schemas).kind).toBe('fits');
  });

  it.each([
    ['a backreference', '^(a)\\1$'],
    ['a lookahead', '^(?=a)a$'],
    ['a negative lookahead', '^(?!a)b$'],
    ['a lookbehind', '(?<=a)b'],
    ['a long Unicode property name', '^\\p{Letter}+$'],
  ])('calls a pinned schema with %s uncompilable (its calls are unverifiable)', (_what, pattern) => {
    const result = check({ type: 'string', pattern }, 'a');
    expect(result).toEqual({ kind: 'uncompilable', problem: expect.stringContaining('linear-time engine') });
  });

  it('reads ECMAScript \\u escapes as RE2 code points, surrogate pairs included', () => {
    expect(re2Spelling('^[\\u0041-\\u005A]+$')).toBe('^[\\x{41}-\\x{5a}]+$');
    expect(re2Spelling('\\uD83D\\uDE00|\\u{1F601}')).toBe('\\x{1f600}|\\x{1F601}');
    // An escaped backslash before u is a backslash and a u, not an escape.
    expect(re2Spelling('\\\\u0041')).toBe('\\\\u0041');
    const schema = { type: 'string', pattern: '^[\\u0000-\\u007F]*$' };
    expect(check(schema, 'plain ascii').kind).toBe('fits');
    expect(check(schema, 'caf\u00e9').kind).toBe('misfit');
    expect(check({ type: 'string', pattern: '^\\uD83D\\uDE00$' }, '\u{1F600}').kind).toBe('fits');
  });
});

describe('PinnedSchemas: numbers are finite (strictNumbers)', () => {
  it('does not take Infinity for an integer or a number', () => {
    const schema = { type: 'object', properties: { limit: { type: 'integer', minimum: 1 } } };
    // Finding 3: with strict off and strictNumbers left to it, Ajv takes Infinity for an integer ≥ 1.
    expect(new Ajv2020({ strict: false }).validate(schema, { limit: Infinity })).toBe(true);
    expect(check(schema, { limit: Infinity })).toEqual({
      kind: 'misfit',
      problems: [{ pointer: '/limit', keyword: 'type' }],
    });
    expect(check({ type: 'number' }, -Infinity).kind).toBe('misfit');
    expect(check(schema, { limit: 3 }).kind).toBe('fits');
  });
});

describe('PinnedSchemas: validation budgets checked before validation', () => {
  const UNIQUE = { type: 'object', properties: { xs: { type: 'array', uniqueItems: true } } };

  it('refuses to validate 16,000 objects under uniqueItems (finding 4) and still checks small arrays', () => {
    const xs = Array.from({ length: 16_000 }, (_, i) => ({ a: 1, b: 'x', c: i }));
    expect(check(UNIQUE, { xs })).toEqual({ kind: 'over_budget', bound: 'unique_items' });
    expect(check(UNIQUE, { xs: xs.slice(0, 50) })).toEqual({ kind: 'fits' });
    expect(check(UNIQUE, { xs: [{ a: 1 }, { a: 1 }] })).toEqual({
      kind: 'misfit',
      problems: [{ pointer: '/xs', keyword: 'uniqueItems' }],
    });
  });

  it('counts arrays only when the schema uses uniqueItems (anywhere, through $ref too)', () => {
    const xs = Array.from({ length: 16_000 }, (_, i) => i);
    expect(check({ type: 'object', properties: { xs: { type: 'array' } } }, { xs }).kind).toBe('fits');
    const viaRef = {
      type: 'object',
      properties: { xs: { $ref: '#/$defs/set' } },
      $defs: { set: { uniqueItems: true } },
    };
    expect(usesUniqueItems(viaRef)).toBe(true);
    expect(usesUniqueItems({ type: 'array', uniqueItems: false })).toBe(false);
    expect(check(viaRef, { xs })).toEqual({ kind: 'over_budget', bound: 'unique_items' });
  });

  it('refuses to validate a value larger than the byte budget, whatever the schema', () => {
    const schemas = new PinnedSchemas({ budget: { maxBytes: 1000 } });
    expect(check({ type: 'object' }, { text: 'x'.repeat(2000) }, schemas)).toEqual({
      kind: 'over_budget',
      bound: 'bytes',
    });
    expect(check({ type: 'object' }, { text: 'x'.repeat(900) }, schemas)).toEqual({ kind: 'fits' });
  });

  it('weighs a value near its JSON length, against the defaults', () => {
    expect(exceededBudget({ a: 'x'.repeat(DEFAULT_MAX_CHECKED_BYTES) }, false)).toBe('bytes');
    expect(exceededBudget({ a: 'x'.repeat(DEFAULT_MAX_CHECKED_BYTES - 100) }, false)).toBeUndefined();
    const side = Math.floor(Math.sqrt(DEFAULT_MAX_UNIQUE_ITEMS_WORK / 2));
    // n items of one byte and a comma: n × 2n, around the budget on either side.
    expect(
      exceededBudget(
        Array.from({ length: side - 50 }, () => 1),
        true,
      ),
    ).toBeUndefined();
    expect(
      exceededBudget(
        Array.from({ length: side + 50 }, () => 1),
        true,
      ),
    ).toBe('unique_items');
  });
});
