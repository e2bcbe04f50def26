import { PinnedSchemas, schemaCompileProblem } from '../../src/state/pinnedSchemas.js';
import {
  MAX_POINTER_LENGTH,
  MAX_SCHEMA_PROBLEMS,
  problemsFromFindings,
} from '../../src/policy/schemaProblems.js';
import type { ServerConfig } from '../../src/config/index.js';
import { pinnedConfig } from '../policy/pinnedTools.js';

const SECRET = 'SECRET-VALUE-5c1d';

/** A pin of one tool `t` with these schemas, made the way `toolpin pin` makes it. */
function pinOf(inputSchema: unknown, outputSchema?: unknown): ServerConfig {
  return pinnedConfig([{ name: 't', inputSchema, ...(outputSchema === undefined ? {} : { outputSchema }) }]);
}

function check(inputSchema: unknown, value: unknown, schemas = new PinnedSchemas()) {
  return schemas.check(pinOf(inputSchema), 'tool:t', 'input', value);
}

describe('PinnedSchemas: dialects', () => {
  it('reads a schema without $schema as JSON Schema 2020-12 (prefixItems applies)', () => {
    const schema = { type: 'array', prefixItems: [{ type: 'number' }] };
    expect(check(schema, ['a'])).toEqual({ kind: 'misfit', problems: [{ pointer: '/0', keyword: 'type' }] });
    expect(check(schema, [1, 'a'])).toEqual({ kind: 'fits' });
    // As zod 4 (the SDK v2) writes it.
    const named = { $schema: 'https://json-schema.org/draft/2020-12/schema', ...schema };
    expect(check(named, ['a'])).toEqual({ kind: 'misfit', problems: [{ pointer: '/0', keyword: 'type' }] });
  });

  it('honours $schema draft-07 (the array form of items) and 2019-09', () => {
    const draft07 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'array',
      items: [{ type: 'number' }],
    };
    expect(check(draft07, ['a'])).toEqual({ kind: 'misfit', problems: [{ pointer: '/0', keyword: 'type' }] });
    // In 2020-12 the array form of items is not a schema: the same schema without $schema is invalid.
    const { $schema: _ignored, ...bare } = draft07;
    expect(check(bare, ['a']).kind).toBe('uncompilable');
    const draft2019 = {
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      type: 'object',
      properties: { n: { type: 'integer' } },
    };
    expect(check(draft2019, { n: 1.5 })).toEqual({
      kind: 'misfit',
      problems: [{ pointer: '/n', keyword: 'type' }],
    });
  });

  it('calls a dialect it does not support uncompilable, naming it', () => {
    const result = check({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }, {});
    expect(result).toEqual({ kind: 'uncompilable', problem: expect.stringContaining('draft-04') });
  });
});

describe('PinnedSchemas: schemas that cannot be compiled', () => {
  it('never fetches a remote $ref: the schema is uncompilable', () => {
    const result = check({ type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } }, {});
    expect(result).toEqual({ kind: 'uncompilable', problem: expect.stringContaining('never fetched') });
    expect(schemaCompileProblem({ $ref: 'https://example.com/a.json' })).toContain(
      'https://example.com/a.json',
    );
  });

  it('resolves a local $ref ($defs) and compiles an invalid schema to a problem, never an exception', () => {
    const local = {
      type: 'object',
      properties: { a: { $ref: '#/$defs/n' } },
      $defs: { n: { type: 'number' } },
    };
    expect(check(local, { a: 'x' })).toEqual({
      kind: 'misfit',
      problems: [{ pointer: '/a', keyword: 'type' }],
    });
    expect(check({ type: 'objekt' }, {}).kind).toBe('uncompilable');
    expect(check({ type: 'object', properties: { a: { pattern: '(' } } }, {}).kind).toBe('uncompilable');
    expect(schemaCompileProblem({ type: 'object' })).toBeUndefined();
    expect(schemaCompileProblem(true)).toBeUndefined();
    expect(schemaCompileProblem('object')).toBeDefined();
  });

  it('ignores unknown keywords and formats (annotations), as the specs say', () => {
    const schema = {
      type: 'object',
      'x-vendor': 1,
      properties: { at: { type: 'string', format: 'date-time' } },
    };
    expect(check(schema, { at: 'not a date' })).toEqual({ kind: 'fits' });
  });

  it('compiles schemas of different servers sharing an $id apart', () => {
    const schemas = new PinnedSchemas();
    const first = { $id: 'https://example.com/args', type: 'object', required: ['a'] };
    const second = { $id: 'https://example.com/args', type: 'object', required: ['b'] };
    expect(check(first, { b: 1 }, schemas)).toMatchObject({ kind: 'misfit' });
    expect(check(second, { b: 1 }, schemas)).toEqual({ kind: 'fits' });
    expect(check(first, { a: 1 }, schemas)).toEqual({ kind: 'fits' });
  });
});

describe('PinnedSchemas: cache', () => {
  it('compiles once per pinned digest and side, and stays within its bound', () => {
    const schemas = new PinnedSchemas({ max: 2 });
    const pin = pinOf({ type: 'object', required: ['a'] }, { type: 'object' });
    schemas.check(pin, 'tool:t', 'input', {});
    schemas.check(pin, 'tool:t', 'input', { a: 1 });
    expect(schemas.size).toBe(1);
    schemas.check(pin, 'tool:t', 'output', {});
    expect(schemas.size).toBe(2);
    schemas.check(pinOf({ type: 'object', required: ['z'] }), 'tool:t', 'input', {});
    expect(schemas.size).toBe(2);
  });

  it('keys on the pinned digest: an equal digest is the same compiled schema', () => {
    const schemas = new PinnedSchemas();
    const pin = pinOf({ type: 'object', required: ['a'] });
    expect(schemas.check(pin, 'tool:t', 'input', {})).toMatchObject({ kind: 'misfit' });
    // A definition that differs from its own digest cannot pass verifyPin; built by hand here to
    // show the digest, not the object, names the compiled schema.
    const forged = {
      ...pin,
      definitions: { 'tool:t': { ...pin.definitions['tool:t'], name: 't', inputSchema: { type: 'object' } } },
    } as ServerConfig;
    expect(schemas.check(forged, 'tool:t', 'input', {})).toMatchObject({ kind: 'misfit' });
  });

  it('checks nothing for a tool opted out, without a definition, or without the schema', () => {
    const schemas = new PinnedSchemas();
    const pin = pinOf({ type: 'object', required: ['a'] });
    expect(schemas.check({ ...pin, validate: { 'tool:t': false } }, 'tool:t', 'input', {})).toEqual({
      kind: 'unchecked',
      why: 'opted_out',
    });
    expect(schemas.check({ ...pin, definitions: {} }, 'tool:t', 'input', {})).toEqual({
      kind: 'unchecked',
      why: 'no_definition',
    });
    expect(schemas.check(pin, 'tool:t', 'output', {})).toEqual({ kind: 'unchecked', why: 'no_schema' });
    expect(schemas.size).toBe(0);
  });
});

describe('PinnedSchemas: findings are pointers and keywords, never values', () => {
  it('points at a missing required property by its (escaped) name, and at nested values by path', () => {
    const schema = {
      type: 'object',
      properties: {
        items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } },
      },
    };
    expect(check({ ...schema, required: ['a/b~c'] }, {})).toEqual({
      kind: 'misfit',
      problems: [{ pointer: '/a~1b~0c', keyword: 'required' }],
    });
    expect(check(schema, { items: [{ n: 1 }, { n: 'x' }] })).toEqual({
      kind: 'misfit',
      problems: [{ pointer: '/items/1/n', keyword: 'type' }],
    });
  });

  it('never carries the value, even where the validator would quote it', () => {
    const cases: [unknown, unknown, { pointer: string; keyword: string }][] = [
      [{ properties: { a: { const: 'expected' } } }, { a: SECRET }, { pointer: '/a', keyword: 'const' }],
      [{ properties: { a: { enum: ['x', 'y'] } } }, { a: SECRET }, { pointer: '/a', keyword: 'enum' }],
      [{ properties: { a: { pattern: '^z' } } }, { a: SECRET }, { pointer: '/a', keyword: 'pattern' }],
      [{ properties: { a: { maxLength: 3 } } }, { a: SECRET }, { pointer: '/a', keyword: 'maxLength' }],
      [
        { additionalProperties: false },
        { [SECRET]: SECRET },
        { pointer: '', keyword: 'additionalProperties' },
      ],
    ];
    for (const [schema, value, problem] of cases) {
      const result = check({ type: 'object', ...(schema as object) }, value);
      expect(result).toEqual({ kind: 'misfit', problems: [problem] });
      expect(JSON.stringify(result)).not.toContain(SECRET);
      expect(JSON.stringify(result)).not.toContain('expected');
    }
  });

  it('stops at the first problem: a huge misfit argument costs one finding', () => {
    const schema = { type: 'array', items: { type: 'number' } };
    expect(
      check(
        schema,
        Array.from({ length: 100_000 }, () => 'x'),
      ),
    ).toEqual({
      kind: 'misfit',
      problems: [{ pointer: '/0', keyword: 'type' }],
    });
  });

  it('reports at most MAX_SCHEMA_PROBLEMS problems of what a validator found', () => {
    const findings = Array.from({ length: 100 }, (_, i) => ({ instancePath: `/${i}`, keyword: 'type' }));
    expect(problemsFromFindings(findings)).toHaveLength(MAX_SCHEMA_PROBLEMS);
    const long = problemsFromFindings([{ instancePath: `/${'k'.repeat(1000)}`, keyword: 'type' }]);
    expect(long[0]?.pointer.length).toBeLessThanOrEqual(MAX_POINTER_LENGTH + 1);
  });
});
