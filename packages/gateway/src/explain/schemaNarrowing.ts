import { isObject } from '../wire/isObject.js';
import type { PathSeverity, SeverityRule } from './driftSeverityTypes.js';
import { sameJsonValue as same } from './extraMembers.js';
import {
  boundNarrowed,
  dependentRequiredNarrowed,
  hasReference,
  isSubset,
  LOWER_BOUNDS,
  typesNarrowed,
  UPPER_BOUNDS,
} from './schemaKeywords.js';
import { pointerToken, schemaTexts, SCHEMA_TEXT_KEYWORDS } from './schemaTexts.js';

// A structural, conservative comparison of two JSON Schemas: it proves that the observed schema
// accepts only what the pinned one accepted in the cases it knows (keyword by keyword, since the
// keywords of a schema object are a conjunction), and judges everything else high. No containment
// solver: a changed `pattern` may well narrow, but proving it is not worth a regex engine here.

type Out = PathSeverity[];

// Assertions the comparison understands: adding one only rejects more, removing one may accept more.
const ASSERTIONS = new Set([
  'type',
  'enum',
  'const',
  'required',
  ...LOWER_BOUNDS,
  ...UPPER_BOUNDS,
  'multipleOf',
  'pattern',
  'format',
  'uniqueItems',
  'dependentRequired',
  'dependentSchemas',
  'propertyNames',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
]);

// Keywords judged together, since one's meaning depends on the others.
const GROUPS: readonly (readonly string[])[] = [
  ['properties', 'patternProperties', 'additionalProperties'],
  ['prefixItems', 'items', 'additionalItems'],
  ['contains', 'minContains', 'maxContains'],
  ['if', 'then', 'else'],
];
const GROUP_OF = new Map(GROUPS.flatMap((group) => group.map((keyword) => [keyword, group] as const)));

// Beyond this many pinned `anyOf` branches, an observed branch is compared with its own index only.
const MAX_BRANCH_SEARCH = 32;

function judged(path: string, rule: SeverityRule): PathSeverity {
  const low = rule === 'schema-narrowed' || rule === 'equivalent';
  return { path, severity: low ? 'low' : 'high', rule };
}

/** Compares where the values differ: a comparison that found nothing wider proves this path narrowed. */
function compareAt(pinned: unknown, observed: unknown, path: string, out: Out): void {
  const before = out.length;
  compareSchemas(pinned, observed, path, out);
  if (out.length === before) out.push(judged(path, 'schema-narrowed'));
}

function compareLists(keyword: string, before: unknown, after: unknown, path: string, out: Out): boolean {
  if (!Array.isArray(before) || !Array.isArray(after)) return false;
  if (keyword === 'allOf') {
    // A conjunction: each pinned conjunct narrowed in place, extra conjuncts only reject more.
    if (after.length < before.length) return false;
    after.forEach((schema, index) => {
      if (index >= before.length) out.push(judged(`${path}/${index}`, 'schema-narrowed'));
      else if (!same(before[index], schema)) compareAt(before[index], schema, `${path}/${index}`, out);
    });
    return true;
  }
  // anyOf: every observed branch within some pinned branch. The search of
  // other branches is bounded: a served schema must not cost the listing path branches squared.
  const searched = before.length <= MAX_BRANCH_SEARCH ? before : [];
  after.forEach((schema, index) => {
    if (index < before.length && same(before[index], schema)) return;
    const within = searched.findIndex((pinned) => {
      const trial: Out = [];
      compareSchemas(pinned, schema, `${path}/${index}`, trial);
      return trial.every((entry) => entry.severity === 'low');
    });
    if (within >= 0) out.push(judged(`${path}/${index}`, 'schema-narrowed'));
    else if (index < before.length) compareAt(before[index], schema, `${path}/${index}`, out);
    else out.push(judged(`${path}/${index}`, 'schema-widened'));
  });
  return true;
}

function changedKeywordNarrows(
  keyword: string,
  before: unknown,
  after: unknown,
  path: string,
  out: Out,
): boolean {
  if (keyword === 'type') return typesNarrowed(before, after);
  if (keyword === 'enum') return isSubset(after, before);
  if (keyword === 'required') return isSubset(before, after);
  if (LOWER_BOUNDS.has(keyword) || UPPER_BOUNDS.has(keyword)) return boundNarrowed(keyword, before, after);
  if (keyword === 'multipleOf')
    return (
      typeof before === 'number' &&
      typeof after === 'number' &&
      before > 0 &&
      Number.isInteger(after / before)
    );
  if (keyword === 'uniqueItems') return after === true;
  if (keyword === 'dependentRequired') return dependentRequiredNarrowed(before, after);
  if (keyword === 'propertyNames') return (compareAt(before, after, path, out), true);
  // `not`: the observed one rejects more when its negated schema accepts more (roles swapped).
  if (keyword === 'not') return (compareAt(after, before, path, out), true);
  if (keyword === 'allOf' || keyword === 'anyOf') return compareLists(keyword, before, after, path, out);
  if (keyword === 'dependentSchemas') {
    if (!isObject(before) || !isObject(after)) return false;
    for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const at = `${path}/${pointerToken(name)}`;
      if (!Object.hasOwn(after, name)) out.push(judged(at, 'schema-widened'));
      else if (!Object.hasOwn(before, name)) out.push(judged(at, 'schema-narrowed'));
      else if (!same(before[name], after[name])) compareAt(before[name], after[name], at, out);
    }
    return true;
  }
  return false;
}

function compareKeyword(
  pinned: Record<string, unknown>,
  observed: Record<string, unknown>,
  keyword: string,
  at: string,
  out: Out,
): void {
  const path = `${at}/${pointerToken(keyword)}`;
  const before = pinned[keyword];
  const after = observed[keyword];
  if (!ASSERTIONS.has(keyword)) {
    out.push(judged(path, 'schema-unproven'));
  } else if (after === undefined) {
    // An enum replaced by one of its values as a const still accepts only pinned values.
    const narrowedToConst =
      keyword === 'enum' && isSubset([observed.const], before) && observed.const !== undefined;
    out.push(judged(path, narrowedToConst ? 'schema-narrowed' : 'schema-widened'));
  } else if (before === undefined) {
    out.push(judged(path, 'schema-narrowed'));
  } else {
    const mark = out.length;
    if (changedKeywordNarrows(keyword, before, after, path, out)) {
      if (out.length === mark) out.push(judged(path, 'schema-narrowed'));
    } else {
      out.length = mark;
      out.push(
        judged(
          path,
          keyword === 'oneOf' || keyword === 'pattern' || keyword === 'format'
            ? 'schema-unproven'
            : 'schema-widened',
        ),
      );
    }
  }
}

function compareProperties(
  pinned: Record<string, unknown>,
  observed: Record<string, unknown>,
  at: string,
  out: Out,
): void {
  const before = pinned.properties ?? {};
  const after = observed.properties ?? {};
  if (!isObject(before) || !isObject(after))
    return void out.push(judged(`${at}/properties`, 'schema-unproven'));
  const patterns = pinned.patternProperties !== undefined || observed.patternProperties !== undefined;
  if (!same(pinned.patternProperties, observed.patternProperties))
    out.push(judged(`${at}/patternProperties`, 'schema-unproven'));
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const path = `${at}/properties/${pointerToken(name)}`;
    if (same(before[name], after[name])) continue;
    // A new property is high even where additional properties were allowed: its name and schema
    // are text the model reads, and they ask it for data it was not asked for before.
    if (!Object.hasOwn(before, name)) out.push(judged(path, 'property-added'));
    else if (!Object.hasOwn(after, name)) {
      // Dropped from `properties`: the name now meets `additionalProperties` (patterns too, unproven).
      if (patterns) out.push(judged(path, 'schema-unproven'));
      else compareAt(before[name], observed.additionalProperties ?? true, path, out);
    } else compareAt(before[name], after[name], path, out);
  }
  if (!same(pinned.additionalProperties, observed.additionalProperties))
    compareAt(
      pinned.additionalProperties ?? true,
      observed.additionalProperties ?? true,
      `${at}/additionalProperties`,
      out,
    );
}

function compareItems(
  pinned: Record<string, unknown>,
  observed: Record<string, unknown>,
  at: string,
  out: Out,
): void {
  const tuples = [pinned, observed].some(
    (schema) => Array.isArray(schema.items) || schema.additionalItems !== undefined,
  );
  const before = pinned.prefixItems ?? [];
  const after = observed.prefixItems ?? [];
  // Draft-07 tuples (`items` as an array, `additionalItems`) are compared for equality only.
  if (tuples || !Array.isArray(before) || !Array.isArray(after))
    return void out.push(judged(`${at}/items`, 'schema-unproven'));
  for (let index = 0; index < Math.max(before.length, after.length); index++) {
    const pinnedItem: unknown = index < before.length ? before[index] : (pinned.items ?? true);
    const observedItem: unknown = index < after.length ? after[index] : (observed.items ?? true);
    if (!same(pinnedItem, observedItem) || index >= Math.min(before.length, after.length))
      compareAt(pinnedItem, observedItem, `${at}/prefixItems/${index}`, out);
  }
  if (!same(pinned.items, observed.items))
    compareAt(pinned.items ?? true, observed.items ?? true, `${at}/items`, out);
}

function compareGroup(
  group: readonly string[],
  pinned: Record<string, unknown>,
  observed: Record<string, unknown>,
  at: string,
  out: Out,
): void {
  const changed = group.filter((keyword) => !same(pinned[keyword], observed[keyword]));
  const pathOf = (keyword: string): string => `${at}/${keyword}`;
  if (group[0] === 'properties') return compareProperties(pinned, observed, at, out);
  if (group[0] === 'prefixItems') return compareItems(pinned, observed, at, out);
  // A conditional or a `contains` where the pinned schema had none is one more conjunct.
  if (group.every((keyword) => pinned[keyword] === undefined)) {
    for (const keyword of changed) out.push(judged(pathOf(keyword), 'schema-narrowed'));
    return;
  }
  if (group[0] === 'if' && pinned.if !== undefined && same(pinned.if, observed.if)) {
    // The same condition splits instances alike: narrowing each branch narrows the whole.
    for (const keyword of changed)
      compareAt(pinned[keyword] ?? true, observed[keyword] ?? true, pathOf(keyword), out);
    return;
  }
  if (group[0] === 'contains' && same(pinned.contains, observed.contains)) {
    const minimum = (schema: Record<string, unknown>): unknown => schema.minContains ?? 1;
    const maximum = (schema: Record<string, unknown>): unknown => schema.maxContains ?? Infinity;
    for (const keyword of changed) {
      const narrowed =
        keyword === 'minContains'
          ? boundNarrowed('minimum', minimum(pinned), minimum(observed))
          : boundNarrowed('maximum', maximum(pinned), maximum(observed));
      out.push(judged(pathOf(keyword), narrowed ? 'schema-narrowed' : 'schema-widened'));
    }
    return;
  }
  for (const keyword of changed) out.push(judged(pathOf(keyword), 'schema-unproven'));
}

function compareObjects(
  pinned: Record<string, unknown>,
  observed: Record<string, unknown>,
  at: string,
  out: Out,
): void {
  // unevaluated* depend on every applicator beside them: such a schema object is compared whole.
  const unevaluated = [pinned, observed].some(
    (schema) => schema.unevaluatedProperties !== undefined || schema.unevaluatedItems !== undefined,
  );
  if (unevaluated) return void out.push(judged(at, 'schema-unproven'));
  const done = new Set<string>();
  for (const keyword of new Set([...Object.keys(pinned), ...Object.keys(observed)])) {
    if (done.has(keyword) || SCHEMA_TEXT_KEYWORDS.includes(keyword)) continue;
    const group = GROUP_OF.get(keyword);
    if (group !== undefined) {
      for (const member of group) done.add(member);
      if (group.some((member) => !same(pinned[member], observed[member])))
        compareGroup(group, pinned, observed, at, out);
    } else if (!same(pinned[keyword], observed[keyword])) {
      compareKeyword(pinned, observed, keyword, at, out);
    }
  }
}

/** Appends the judgments of where `observed` differs from `pinned` (both schemas) at `at`. */
function compareSchemas(pinned: unknown, observed: unknown, at: string, out: Out): void {
  if (same(pinned, observed)) return;
  if (observed === false) return void out.push(judged(at, 'schema-narrowed'));
  if (pinned === false) return void out.push(judged(at, 'schema-widened'));
  const before = pinned === true ? {} : pinned;
  const after = observed === true ? {} : observed;
  if (!isObject(before) || !isObject(after)) return void out.push(judged(at, 'schema-unproven'));
  compareObjects(before, after, at, out);
}

/**
 * Judges a changed `inputSchema` or `outputSchema` (member pointer `at`): `high` where the observed
 * schema may accept what the pinned one rejected (or the comparison cannot tell) and where a
 * description or title changed; `low` where it provably accepts only what the pinned one accepted.
 * A schema with references (`$ref`) is compared for equality only: a change to what a reference
 * points at is not local.
 */
export function judgeSchemaChange(pinned: unknown, observed: unknown, at: string): PathSeverity[] {
  const out: Out = [];
  const before = schemaTexts(pinned, at);
  const after = schemaTexts(observed, at);
  for (const pointer of new Set([...before.keys(), ...after.keys()]))
    if (!same(before.get(pointer), after.get(pointer))) out.push(judged(pointer, 'text'));
  if (same(pinned, observed)) return out;
  if (pinned === undefined || observed === undefined || hasReference(pinned) || hasReference(observed))
    out.push(judged(at, 'schema-unproven'));
  else compareSchemas(pinned, observed, at, out);
  return out;
}
