// Issue 24: validation is bounded. A pinned schema that applies its subschemas to one value many
// times (a $ref recursing under anyOf, an allOf of the same definition twice) costs time
// exponential in the value's nesting on the event loop: its cost is worked out from the schema
// (schemaCost.ts) and, past a few applications per value, validation is metered and refused once
// its work runs out (meteredValidation.ts).
import { PinnedSchemas, schemaCompileProblem } from '../../src/state/pinnedSchemas.js';
import { costProfile, referenceProblem } from '../../src/state/schemaCost.js';
import { weighValue, workAllowed } from '../../src/state/validationBudget.js';
import { DEFAULT_MAX_VALIDATION_WORK, DEFAULT_VALIDATION_WORK_FACTOR } from '../../src/defaults.js';
import type { ServerConfig } from '../../src/config/index.js';
import { pinnedConfig } from '../policy/pinnedTools.js';

function pinOf(inputSchema: unknown): ServerConfig {
  return pinnedConfig([{ name: 't', inputSchema }]);
}

function check(inputSchema: unknown, value: unknown, schemas = new PinnedSchemas()) {
  return schemas.check(pinOf(inputSchema), 'tool:t', 'input', value);
}

const CAP = 1e12;
const profileOf = (schema: unknown) => costProfile(schema, CAP, DEFAULT_VALIDATION_WORK_FACTOR);

/** `{"a": {"a": … leaf}}`, `depth` levels. */
function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

// Both branches recurse into the same member: Ajv applies the definition 2^depth times (and,
// with a leaf neither accepts, gathers and copies 2^depth errors). 22 levels took 49 s.
const BRANCHING = {
  $defs: {
    n: {
      anyOf: [
        { type: 'object', properties: { a: { $ref: '#/$defs/n' } } },
        { type: 'object', properties: { a: { $ref: '#/$defs/n' } } },
      ],
    },
  },
  $ref: '#/$defs/n',
};

// A legitimate recursive schema: a tree, recursing once per child, as `$ref: "#"`.
const TREE = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    children: { type: 'array', items: { $ref: '#' } },
  },
  required: ['name'],
};

function tree(depth: number, width: number): unknown {
  return {
    name: `n${depth}`,
    children: depth === 0 ? [] : Array.from({ length: width }, () => tree(depth - 1, width)),
  };
}

/** A chain of 30 definitions, each `allOf` the next one twice: 2^30 applications to `{}`. */
function doublingChain(length: number): unknown {
  const $defs: Record<string, unknown> = { [`d${length}`]: { type: 'object' } };
  for (let i = 0; i < length; i++)
    $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  return { $defs, $ref: '#/$defs/d0' };
}

describe('costProfile: how many times one value can have a subschema applied, depth by depth', () => {
  it('calls a plain schema linear: each member meets its own properties entry once', () => {
    const plain = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, { type: 'string' }])),
      required: ['p0'],
    };
    expect(profileOf(plain)).toMatchObject({ evaluations: [1, 1], linear: 1, compares: false });
    // allOf of two typed schemas: the value meets three schema objects.
    expect(profileOf({ allOf: [{ type: 'object' }, { required: ['a'] }] })).toMatchObject({ linear: 3 });
    expect(profileOf({ type: 'string', enum: ['a', 'b'] })).toMatchObject({ compared: [2], compares: true });
  });

  it('calls a tree linear at every depth, however deep (the recursion has one branch)', () => {
    const profile = profileOf(TREE);
    expect(profile?.linear).toBeLessThanOrEqual(2);
    expect(profile?.evaluations).toHaveLength(257);
  });

  it('counts a recursion through two branches as doubling per level, past the linear factor', () => {
    const profile = profileOf(BRANCHING);
    expect(profile?.linear).toBeUndefined();
    expect(profile?.evaluations.slice(0, 4)).toEqual([4, 8, 16, 32]);
    // Counts past the cap are Infinity, never a float that wrapped.
    expect(costProfile(BRANCHING, 1000, 4)?.evaluations[10]).toBe(Infinity);
  });

  it('counts a chain of allOf [ref, ref] (no recursion at all) by its paths: 2^30 on the root', () => {
    expect(profileOf(doublingChain(30))?.evaluations[0]).toBeGreaterThan(2 ** 30);
  });

  it('knows no profile for an in-place cycle, or a reference resolved by $id or anchor (metered)', () => {
    const cycle = { $defs: { a: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' };
    expect(profileOf(cycle)).toBeUndefined();
    expect(profileOf({ $defs: { a: { $anchor: 'x', type: 'string' } }, $ref: '#x' })).toBeUndefined();
    expect(profileOf({ $dynamicAnchor: 'n', items: { $dynamicRef: '#n' } })).toBeUndefined();
  });
});

describe('weighValue: the work a linear schema may cost, from the same pass that bounds bytes', () => {
  it('is the profile factor times the value weight, plus what const and enum compare', () => {
    const value = { xs: ['ab', 'cd'] };
    // 1 + 1 member, 1 + 2 items, two strings of 1 + 2: 2 + 3 + 6.
    expect(weighValue(value, false).weight).toBe(11);
    expect(weighValue(value, false, {}, { ...profileOf({}), linear: 3 } as never).work).toBe(33);
    const enumerated = profileOf({ items: { enum: ['a', 'b', 'c'] } });
    // Applied once to each part (weight 1 + 2, and 1 + 1 per string) + 3 values compared per string.
    expect(enumerated?.linear).toBe(1);
    expect(weighValue(['a', 'b'], false, {}, enumerated).work).toBe(7 + 2 * 3);
    expect(weighValue(['a', 'b'], false, {}, profileOf(BRANCHING)).work).toBe(Infinity);
  });

  it('allows the fixed budget plus the work factor times the weight', () => {
    expect(workAllowed(0)).toBe(DEFAULT_MAX_VALIDATION_WORK);
    expect(workAllowed(10, { maxWork: 5, workFactor: 2 })).toBe(25);
  });
});

describe('PinnedSchemas: a schema that applies subschemas to a value many times is metered', () => {
  it('refuses the branching recursion on a nested argument as over_budget (evaluations)', () => {
    expect(check(BRANCHING, nested(22))).toEqual({ kind: 'over_budget', bound: 'evaluations' });
    expect(check(BRANCHING, nested(200, {}))).toEqual({ kind: 'over_budget', bound: 'evaluations' });
  });

  it('still validates it on a shallow argument, exactly (fits and misfits)', () => {
    expect(check(BRANCHING, nested(4, {}))).toEqual({ kind: 'fits' });
    expect(check(BRANCHING, nested(4))).toMatchObject({ kind: 'misfit' });
  });

  it('refuses the 2^30 allOf chain on {} and an in-place cycle (which only ends with the stack)', () => {
    expect(check(doublingChain(30), {})).toEqual({ kind: 'over_budget', bound: 'evaluations' });
    expect(check(doublingChain(3), {})).toEqual({ kind: 'fits' });
    const cycle = { $defs: { a: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' };
    expect(check(cycle, 'x')).toEqual({ kind: 'over_budget', bound: 'evaluations' });
  });

  it('bounds fan-in in proportion to the value: 200 × items over 20,000 numbers is refused, 10 fit', () => {
    const fan = { allOf: Array.from({ length: 200 }, () => ({ items: { type: 'number' } })) };
    // Weight 60,000: 1 Mi + 4 × 60,000 allowed, 200 × 40,000 needed.
    const many = Array.from({ length: 20_000 }, (_, i) => i);
    expect(check(fan, many)).toEqual({ kind: 'over_budget', bound: 'evaluations' });
    expect(check(fan, many.slice(0, 10))).toEqual({ kind: 'fits' });
    expect(check(fan, ['x'])).toMatchObject({ kind: 'misfit' });
  });

  it('charges deep comparisons: 30 × const of a 500-item array is refused, the same on 20 items fits', () => {
    const big = Array.from({ length: 500 }, (_, i) => i);
    const schema = { allOf: Array.from({ length: 30 }, () => ({ const: big })) };
    // 30 comparisons of ~1.9 kB: past 10,000 + 4 × 1,001.
    const schemas = new PinnedSchemas({ budget: { maxWork: 10_000 } });
    expect(check(schema, big, schemas)).toEqual({ kind: 'over_budget', bound: 'evaluations' });
    const small = { allOf: Array.from({ length: 30 }, () => ({ const: big.slice(0, 20) })) };
    expect(check(small, big.slice(0, 20), schemas)).toEqual({ kind: 'fits' });
  });

  it('validates a legitimate recursive tree ($ref "#") and finds its misfits', () => {
    const schemas = new PinnedSchemas();
    expect(check(TREE, tree(6, 4), schemas)).toEqual({ kind: 'fits' });
    expect(check(TREE, { name: 'a', children: [{ name: 'b', children: [{}] }] }, schemas)).toEqual({
      kind: 'misfit',
      problems: [{ pointer: '/children/0/children/0/name', keyword: 'required' }],
    });
  });

  it('meters a schema with references resolved by anchor, and still validates it', () => {
    const anchored = {
      $defs: { node: { $anchor: 'node', type: 'object', properties: { next: { $ref: '#node' } } } },
      $ref: '#node',
    };
    expect(check(anchored, nested(5, {}))).toEqual({ kind: 'fits' });
    expect(check(anchored, { next: { next: 3 } })).toMatchObject({ kind: 'misfit' });
  });

  it('counts a metered call against a budget that can be set lower', () => {
    const schemas = new PinnedSchemas({ budget: { maxWork: 10, workFactor: 0 } });
    expect(check(BRANCHING, nested(3, {}), schemas)).toEqual({ kind: 'over_budget', bound: 'evaluations' });
  });
});

describe('schemas the meter cannot cover are uncompilable', () => {
  it('refuses a $ref into data or into a map of subschemas, and an anchor inside data', () => {
    expect(referenceProblem({ default: { type: 'string' }, $ref: '#/default' })).toMatch(/not a subschema/);
    expect(referenceProblem({ properties: { a: {} }, $ref: '#/properties' })).toMatch(/not a subschema/);
    expect(referenceProblem({ enum: [{ $anchor: 'x' }], $ref: '#x' })).toMatch(/inside data/);
    expect(schemaCompileProblem({ const: { items: {} }, $ref: '#/const' })).toMatch(/not a subschema/);
    // A property named like a data keyword is a subschema.
    const named = { properties: { default: { type: 'string' } }, $ref: '#/properties/default' };
    expect(referenceProblem(named)).toBeUndefined();
    expect(check(named, 'x')).toEqual({ kind: 'fits' });
  });

  it('refuses an $async schema, whose validator would answer a promise (every value fitting)', () => {
    const schema = { $async: true, type: 'object', required: ['n'] };
    expect(schemaCompileProblem(schema)).toMatch(/\$async/);
    expect(check(schema, {})).toMatchObject({ kind: 'uncompilable' });
  });
});
