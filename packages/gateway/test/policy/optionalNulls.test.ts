import { withoutOptionalNulls } from '../../src/policy/optionalNulls.js';
import { validationModeOf } from '../../src/policy/validationMode.js';

const SCHEMA = {
  type: 'object',
  properties: {
    region: { type: 'string' },
    verbose: { type: 'boolean' },
    options: {
      type: 'object',
      properties: { depth: { type: 'integer' }, label: { type: 'string' } },
      required: ['label'],
    },
  },
  required: ['region'],
};

describe('withoutOptionalNulls: null for a declared, non-required property read as absent', () => {
  it('leaves out a null member the schema declares and does not require, at the top level', () => {
    const args = { region: 'eu', verbose: null };
    expect(withoutOptionalNulls(SCHEMA, args)).toEqual({ region: 'eu' });
    // The arguments themselves are untouched: what is forwarded is what was sent.
    expect(args).toEqual({ region: 'eu', verbose: null });
  });

  it('keeps a null the schema requires, and a null member the schema does not declare', () => {
    expect(withoutOptionalNulls(SCHEMA, { region: null, verbose: true })).toEqual({
      region: null,
      verbose: true,
    });
    expect(withoutOptionalNulls(SCHEMA, { region: 'eu', extra: null })).toEqual({
      region: 'eu',
      extra: null,
    });
  });

  it('reads nested objects by their own properties and required, down a chain of properties', () => {
    const args = { region: 'eu', options: { depth: null, label: null } };
    expect(withoutOptionalNulls(SCHEMA, args)).toEqual({ region: 'eu', options: { label: null } });
    expect(args.options).toEqual({ depth: null, label: null });
  });

  it('does not read through $ref, allOf or items (left to the check as sent)', () => {
    const schema = {
      type: 'object',
      $defs: { opt: { type: 'object', properties: { x: { type: 'string' } } } },
      properties: {
        a: { $ref: '#/$defs/opt' },
        b: { allOf: [{ properties: { x: {} } }] },
        c: { items: { properties: { x: {} } } },
      },
    };
    const args = { a: { x: null }, b: { x: null }, c: [{ x: null }] };
    expect(withoutOptionalNulls(schema, args)).toBe(args);
  });

  it('returns the value itself when nothing is left out, and leaves non-objects alone', () => {
    const args = { region: 'eu', verbose: false };
    expect(withoutOptionalNulls(SCHEMA, args)).toBe(args);
    expect(withoutOptionalNulls(SCHEMA, null)).toBeNull();
    expect(withoutOptionalNulls(SCHEMA, [null])).toEqual([null]);
    expect(withoutOptionalNulls(true, { verbose: null })).toEqual({ verbose: null });
    // `required` that is not a list of names requires nothing; non-string entries are ignored.
    expect(withoutOptionalNulls({ properties: { a: {} }, required: 'a' }, { a: null })).toEqual({});
    expect(withoutOptionalNulls({ properties: { a: {} }, required: [1] }, { a: null })).toEqual({});
  });

  it('keeps a member named __proto__ a member of the copy, never the prototype', () => {
    const schema = { properties: { ['__proto__']: { properties: { x: {} } }, y: {} } };
    const args = JSON.parse('{"__proto__": {"x": null}, "y": null}') as Record<string, unknown>;
    const read = withoutOptionalNulls(schema, args) as Record<string, unknown>;
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
    expect(Object.keys(read)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(read, '__proto__')?.value).toEqual({});
  });
});

describe('validationModeOf: the pin file validate setting of one tool', () => {
  it('is lenient by default, off for false, strict per tool or for the whole server', () => {
    expect(validationModeOf({}, 'tool:a')).toBe('lenient');
    expect(validationModeOf({ validate: {} }, 'tool:a')).toBe('lenient');
    expect(validationModeOf({ validate: { 'tool:a': true } }, 'tool:a')).toBe('lenient');
    expect(validationModeOf({ validate: { 'tool:a': false } }, 'tool:a')).toBe('off');
    expect(validationModeOf({ validate: { 'tool:a': 'strict' } }, 'tool:a')).toBe('strict');
    expect(validationModeOf({ validate: { 'tool:a': 'strict' } }, 'tool:b')).toBe('lenient');
    expect(validationModeOf({ validate: 'strict' }, 'tool:a')).toBe('strict');
    expect(validationModeOf({ validate: { 'tool:a': false } }, 'toString')).toBe('lenient');
  });
});
