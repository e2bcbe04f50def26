import { isObject } from '../wire/isObject.js';
import { sameJsonValue as same } from './extraMembers.js';

// Keyword-level facts of the schema comparison (schemaNarrowing.ts): each answers one question
// about two values of one keyword, and says false when it cannot tell.

const REFERENCES = new Set(['$ref', '$dynamicRef', '$recursiveRef']);

/** Keywords whose larger value rejects more. */
export const LOWER_BOUNDS = new Set([
  'minimum',
  'exclusiveMinimum',
  'minLength',
  'minItems',
  'minProperties',
]);
/** Keywords whose smaller value rejects more. */
export const UPPER_BOUNDS = new Set([
  'maximum',
  'exclusiveMaximum',
  'maxLength',
  'maxItems',
  'maxProperties',
]);

/** True when a schema uses `$ref`, `$dynamicRef` or `$recursiveRef` anywhere. */
export function hasReference(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasReference);
  if (!isObject(value)) return false;
  return Object.entries(value).some(([key, inner]) => REFERENCES.has(key) || hasReference(inner));
}

/** A `type` value as a set of names; undefined when it is not one. */
export function typeSet(value: unknown): Set<string> | undefined {
  const types = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(types) || !types.every((type) => typeof type === 'string')) return undefined;
  return new Set(types as string[]);
}

/** The observed `type` admits only pinned types (`integer` within `number`). */
export function typesNarrowed(before: unknown, after: unknown): boolean {
  const pinned = typeSet(before);
  const observed = typeSet(after);
  if (pinned === undefined || observed === undefined) return false;
  return [...observed].every((type) => pinned.has(type) || (type === 'integer' && pinned.has('number')));
}

/** Every value of `after` is one of `before` (both arrays). */
export function isSubset(after: unknown, before: unknown): boolean {
  if (!Array.isArray(after) || !Array.isArray(before)) return false;
  return after.every((value) => before.some((pinned) => same(pinned, value)));
}

/** A bound moved only towards rejecting more (both numbers). */
export function boundNarrowed(keyword: string, before: unknown, after: unknown): boolean {
  if (typeof before !== 'number' || typeof after !== 'number') return false;
  return LOWER_BOUNDS.has(keyword) ? after >= before : after <= before;
}

/** Every pinned `dependentRequired` list is kept, possibly longer. */
export function dependentRequiredNarrowed(before: unknown, after: unknown): boolean {
  if (!isObject(before) || !isObject(after)) return false;
  return Object.entries(before).every(
    ([name, list]) => Object.hasOwn(after, name) && isSubset(list, after[name]),
  );
}
