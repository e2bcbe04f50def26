import { MAX_JSON_DEPTH } from '../wire/jsonDepth.js';

// How a schema's keywords hold subschemas (JSON Schema draft-07, 2019-09, 2020-12). A keyword
// not named here is an annotation: its object value is still read as a subschema a `$ref` may
// point at (as Ajv does), never as data.

/** Keywords whose value is data, never a subschema (a `$ref` must not point into them). */
const DATA_KEYWORDS: ReadonlySet<string> = new Set([
  'const',
  'enum',
  'default',
  'examples',
  'required',
  'examples',
]);

/** Keywords whose value maps names to subschemas. */
const MAP_KEYWORDS: ReadonlySet<string> = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
  'dependentRequired',
  '$vocabulary',
]);

/** Applicators whose subschemas apply to the same value as their schema. */
const IN_PLACE: ReadonlySet<string> = new Set([
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
]);

/** Applicators whose subschemas apply to the value's items, members or member names. */
const DESCENDING: ReadonlySet<string> = new Set([
  'properties',
  'patternProperties',
  'additionalProperties',
  'propertyNames',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'contains',
  'unevaluatedItems',
]);

/**
 * How many values a schema object's `const` and `enum` compare a value with (deep equality, which
 * reads the value whole).
 */
export function comparedValues(schema: Schema): number {
  return ('const' in schema ? 1 : 0) + (Array.isArray(schema.enum) ? schema.enum.length : 0);
}

type Schema = Record<string, unknown>;

function isSchemaObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The subschemas one schema object holds, each with the keyword holding it. Booleans (`true`,
 * `false`) are subschemas too but hold nothing and cost nothing: they are left out.
 */
export function subschemasOf(schema: Schema): Array<readonly [keyword: string, child: Schema]> {
  const found: Array<readonly [string, Schema]> = [];
  for (const [keyword, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(keyword)) continue;
    const children = MAP_KEYWORDS.has(keyword) && isSchemaObject(value) ? Object.values(value) : [value];
    for (const child of children.flatMap((each) => (Array.isArray(each) ? each : [each])))
      if (isSchemaObject(child)) found.push([keyword, child]);
  }
  return found;
}

/** Every schema object of a schema (the root included), each once. */
export function allSchemaObjects(root: unknown): Schema[] {
  if (!isSchemaObject(root)) return [];
  const seen = new Set<Schema>([root]);
  const stack = [root];
  while (stack.length > 0) {
    for (const [, child] of subschemasOf(stack.pop() as Schema)) {
      if (seen.has(child)) continue;
      seen.add(child);
      stack.push(child);
    }
  }
  return [...seen];
}

const REF_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef'] as const;

/** A JSON pointer fragment's segments (`#/a~1b/%25` is `a/b`, `%`), or undefined when malformed. */
function pointerSegments(fragment: string): string[] | undefined {
  try {
    return fragment
      .split('/')
      .slice(1)
      .map((segment) => decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~'));
  } catch {
    return undefined;
  }
}

/**
 * Walks a JSON pointer from a schema object. Returns the schema object it names, `undefined` when
 * it names nothing, or `'not_a_subschema'` when it passes through or lands on data (`const`,
 * `enum`, `default`…) or a map of subschemas itself.
 */
function walkPointer(from: Schema, segments: readonly string[]): Schema | 'not_a_subschema' | undefined {
  let at: unknown = from;
  for (let i = 0; i < segments.length; i++) {
    const keyword = segments[i] as string;
    if (!isSchemaObject(at)) return at === undefined ? undefined : 'not_a_subschema';
    if (DATA_KEYWORDS.has(keyword) && keyword in at) return 'not_a_subschema';
    at = at[keyword];
    const container = MAP_KEYWORDS.has(keyword) ? isSchemaObject(at) : Array.isArray(at);
    if (!container) continue;
    if (i + 1 === segments.length) return 'not_a_subschema';
    at = (at as Record<string, unknown>)[segments[++i] as string];
    if (Array.isArray(at) && MAP_KEYWORDS.has(keyword)) return 'not_a_subschema';
  }
  if (at === undefined || typeof at === 'boolean') return undefined;
  return isSchemaObject(at) ? at : 'not_a_subschema';
}

const ANCHORS = ['$id', '$anchor', '$dynamicAnchor'] as const;

/** Every object of a JSON value, wherever it is. */
function allObjects(value: unknown): Schema[] {
  const found: Schema[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop() as object;
    if (!Array.isArray(node)) found.push(node as Schema);
    for (const child of Object.values(node))
      if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return found;
}

/**
 * Why a schema's references cannot be metered, or undefined. Every schema object of the
 * schema is metered; a reference must land on one. So a `$ref` whose JSON pointer names data
 * (`{"$ref": "#/default"}`) or a map of subschemas (`#/properties`), or an `$id` or anchor
 * written inside data, is refused: Ajv would compile that data as a schema the gateway never
 * sees as one. No real schema does this; such a schema is uncompilable.
 */
export function referenceProblem(root: unknown): string | undefined {
  if (typeof root !== 'object' || root === null) return undefined;
  const schemas = allSchemaObjects(root);
  const known = new Set(schemas);
  for (const object of allObjects(root)) {
    if (known.has(object)) continue;
    const anchor = ANCHORS.find((keyword) => typeof object[keyword] === 'string');
    if (anchor !== undefined || object.$recursiveAnchor === true)
      return `an ${anchor ?? '$recursiveAnchor'} written inside data, where no subschema is`;
  }
  // A pointer starts at a resource: the root, or a subschema with an $id.
  const resources = schemas.filter((schema, i) => i === 0 || typeof schema.$id === 'string');
  for (const schema of schemas) {
    for (const keyword of REF_KEYWORDS) {
      const ref = schema[keyword];
      if (typeof ref !== 'string') continue;
      const fragment = ref.includes('#') ? ref.slice(ref.indexOf('#') + 1) : '';
      if (!fragment.startsWith('/')) continue;
      const segments = pointerSegments(fragment);
      const lands = (from: Schema) =>
        segments !== undefined && walkPointer(from, segments) !== 'not_a_subschema';
      if (!resources.every(lands))
        return `a ${keyword} that points at something that is not a subschema (${JSON.stringify(ref.slice(0, 100))})`;
    }
  }
  return undefined;
}

/**
 * What validating a value against a schema may cost, depth by depth, worked out from the schema
 * alone: `evaluations[d]` bounds how many times a subschema is applied to one value at nesting
 * depth `d` (0: the value itself), `compared[d]` how many values `const` and `enum` compare it
 * with, `uniques[d]` how many times `uniqueItems` compares its items. Past the work budget: Infinity.
 */
export interface CostProfile {
  readonly evaluations: readonly number[];
  readonly compared: readonly number[];
  readonly uniques: readonly number[];
  /**
   * Set when the schema applies subschemas to no value more than `linearFactor` times: the most
   * times it does (its work is then at most this × the value's weight, plus what it compares).
   * Unset, validating may cost more than in proportion to the value (a recursion through
   * branches, failing ones gathering errors): such a schema is metered.
   */
  readonly linear?: number;
  /** True when the schema uses `const`, `enum` or `uniqueItems` where a value can meet it. */
  readonly compares: boolean;
}

/**
 * The target of a `$ref` when it can be resolved without Ajv: a JSON pointer fragment (`#`,
 * `#/$defs/node`) in a schema whose only `$id` is at its root and that defines no anchor. Else
 * undefined (the profile is then unknown).
 */
function localTarget(root: Schema, ref: unknown): Schema | boolean | undefined {
  if (typeof ref !== 'string' || !ref.startsWith('#')) return undefined;
  if (ref === '#') return root;
  const segments = ref.startsWith('#/') ? pointerSegments(ref.slice(1)) : undefined;
  let at: unknown = root;
  for (const segment of segments ?? [])
    at = isSchemaObject(at) || Array.isArray(at) ? at[segment as never] : undefined;
  return segments !== undefined && (isSchemaObject(at) || typeof at === 'boolean') ? at : undefined;
}

interface Graph {
  /** Per schema object: the subschemas applied to the same value (with repeats). */
  readonly inPlace: number[][];
  /**
   * Per schema object: groups of subschemas of which at most one applies to a given item or
   * member (`properties` by name, `prefixItems` by position).
   */
  readonly exclusive: number[][][];
  /** Per schema object: the other subschemas applied to its items, members or member names. */
  readonly descending: number[][];
  /** Per schema object: {@link comparedValues}. */
  readonly compares: number[];
  /** Per schema object: 1 with `uniqueItems`, else 0. */
  readonly uniques: number[];
}

/** Keywords whose subschemas each apply to different members or items. */
const EXCLUSIVE: ReadonlySet<string> = new Set(['properties', 'prefixItems']);

/** The schema as a graph of its schema objects (root first), or undefined when a reference cannot be resolved here. */
function graphOf(root: Schema): Graph | undefined {
  const schemas = allSchemaObjects(root);
  const index = new Map(schemas.map((schema, i) => [schema, i]));
  const graph: Graph = { inPlace: [], exclusive: [], descending: [], compares: [], uniques: [] };
  for (const [i, schema] of schemas.entries()) {
    if (i > 0 && ANCHORS.some((keyword) => keyword in schema)) return undefined;
    if ('$dynamicRef' in schema || '$recursiveRef' in schema || '$recursiveAnchor' in schema)
      return undefined;
    const inPlace: number[] = [];
    const descending: number[] = [];
    const groups = new Map<string, number[]>();
    for (const [keyword, child] of subschemasOf(schema)) {
      const at = index.get(child) as number;
      // The array form of `items` (draft-07, 2019-09) is positional like `prefixItems`.
      const group = EXCLUSIVE.has(keyword) || (keyword === 'items' && Array.isArray(schema.items));
      if (IN_PLACE.has(keyword)) inPlace.push(at);
      else if (group) groups.set(keyword, [...(groups.get(keyword) ?? []), at]);
      else if (DESCENDING.has(keyword)) descending.push(at);
    }
    if ('$ref' in schema) {
      const target = localTarget(root, schema.$ref);
      if (target === undefined) return undefined;
      if (typeof target !== 'boolean') inPlace.push(index.get(target) as number);
    }
    graph.inPlace.push(inPlace);
    graph.exclusive.push([...groups.values()]);
    graph.descending.push(descending);
    graph.compares.push(comparedValues(schema));
    graph.uniques.push(schema.uniqueItems === true ? 1 : 0);
  }
  return graph;
}

/** The schema objects in an order where each comes before those it applies in place, or undefined on a cycle. */
function inPlaceOrder(graph: Graph): number[] | undefined {
  const incoming = graph.inPlace.map(() => 0);
  for (const targets of graph.inPlace)
    for (const target of targets) incoming[target] = (incoming[target] as number) + 1;
  const ready = incoming.flatMap((count, i) => (count === 0 ? [i] : []));
  const order: number[] = [];
  while (ready.length > 0) {
    const next = ready.pop() as number;
    order.push(next);
    for (const target of graph.inPlace[next] as number[]) {
      incoming[target] = (incoming[target] as number) - 1;
      if (incoming[target] === 0) ready.push(target);
    }
  }
  // A cycle of in-place references never descends: its cost is not bounded by the value at all.
  return order.length === graph.inPlace.length ? order : undefined;
}

/** Counts of one depth: applications, values compared by `const`/`enum`, `uniqueItems` checks. */
type Counts = readonly [evaluations: number, compares: number, uniques: number];

const NONE: Counts = [0, 0, 0];

function add(a: Counts, b: Counts, cap: number): Counts {
  return [capped(a[0] + b[0], cap), capped(a[1] + b[1], cap), capped(a[2] + b[2], cap)];
}

function most(a: Counts, b: Counts): Counts {
  return [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.max(a[2], b[2])];
}

/**
 * One depth further down: for each schema object, the most counts one item or member at that
 * relative depth can meet when the object is applied to its parent, given `above` (the counts
 * one depth up for each object). In-place subschemas add theirs (children first in `order`).
 */
function deeper(
  graph: Graph,
  order: readonly number[],
  above: readonly Counts[] | undefined,
  cap: number,
): Counts[] {
  const counts: Counts[] = graph.inPlace.map(() => NONE);
  for (const at of [...order].reverse()) {
    let own: Counts =
      above === undefined ? [1, graph.compares[at] as number, graph.uniques[at] as number] : NONE;
    if (above !== undefined) {
      for (const group of graph.exclusive[at] as number[][])
        own = add(own, group.map((child) => above[child] as Counts).reduce(most, NONE), cap);
      for (const child of graph.descending[at] as number[]) own = add(own, above[child] as Counts, cap);
    }
    for (const child of graph.inPlace[at] as number[]) own = add(own, counts[child] as Counts, cap);
    counts[at] = own;
  }
  return counts;
}

/**
 * The {@link CostProfile} of a schema, or undefined when it cannot be worked out here (a reference
 * Ajv resolves by `$id`, anchor or dynamic scope; a cycle of in-place references): such a schema
 * is always metered. Depth by depth, the most times one value there can have a subschema applied
 * to it: every in-place subschema counts, every descending keyword may apply to every item or
 * member, except that of `properties` (and `prefixItems`) at most one applies to each.
 */
export function costProfile(schema: unknown, cap: number, linearFactor: number): CostProfile | undefined {
  if (typeof schema === 'boolean')
    return { evaluations: [1], compared: [0], uniques: [0], linear: 1, compares: false };
  if (!isSchemaObject(schema)) return undefined;
  const graph = graphOf(schema);
  const order = graph === undefined ? undefined : inPlaceOrder(graph);
  if (graph === undefined || order === undefined) return undefined;
  const profile = { evaluations: [] as number[], compared: [] as number[], uniques: [] as number[] };
  let counts: Counts[] | undefined;
  for (let depth = 0; depth <= MAX_JSON_DEPTH; depth++) {
    counts = deeper(graph, order, counts, cap);
    const [evaluations, compares, uniques] = counts[0] as Counts;
    if (evaluations === 0) break;
    profile.evaluations.push(evaluations);
    profile.compared.push(compares);
    profile.uniques.push(uniques);
  }
  const highest = Math.max(...profile.evaluations);
  const compares = [...profile.compared, ...profile.uniques].some((count) => count > 0);
  return highest <= linearFactor ? { ...profile, compares, linear: highest } : { ...profile, compares };
}

function capped(count: number, cap: number): number {
  return count > cap ? Infinity : count;
}
