import type { ValidationBound } from '../policy/schemaProblems.js';
import {
  DEFAULT_MAX_CHECKED_BYTES,
  DEFAULT_MAX_UNIQUE_ITEMS_WORK,
  DEFAULT_MAX_VALIDATION_WORK,
  DEFAULT_VALIDATION_WORK_FACTOR,
} from '../defaults.js';
import type { CostProfile } from './schemaCost.js';

/** What validating one value against a pinned schema may cost, checked before it runs. */
export interface ValidationBudget {
  /** Bound on the value's JSON, in bytes. @default 4 MiB ({@link DEFAULT_MAX_CHECKED_BYTES}) */
  readonly maxBytes?: number;
  /**
   * Bound on Σ items × JSON bytes over the value's arrays, when the schema uses `uniqueItems`.
   * @default 16 Mi ({@link DEFAULT_MAX_UNIQUE_ITEMS_WORK})
   */
  readonly maxUniqueItemsWork?: number;
  /**
   * Bound on the work of applying the schema's subschemas to the value (each application counts
   * 1, plus the value's items, members or characters; `const`, `enum` and `uniqueItems` count
   * what they compare): see {@link weighValue} and `meteredValidation.ts`.
   * @default 4 Mi ({@link DEFAULT_MAX_VALIDATION_WORK})
   */
  readonly maxWork?: number;
  /**
   * Work allowed beside `maxWork` per unit of the value's own weight (looking at each of its parts
   * once): validation may cost this many looks at every part of the value.
   * @default 4 ({@link DEFAULT_VALIDATION_WORK_FACTOR})
   */
  readonly workFactor?: number;
}

/** The work validating a value of this weight may cost under `budget`: maxWork + workFactor × weight. */
export function workAllowed(weight: number, budget: ValidationBudget = {}): number {
  return (
    (budget.maxWork ?? DEFAULT_MAX_VALIDATION_WORK) +
    (budget.workFactor ?? DEFAULT_VALIDATION_WORK_FACTOR) * weight
  );
}

/**
 * True when a schema uses `uniqueItems` anywhere. Where it applies is not worked out (`$ref`,
 * `anyOf`…): every array of a value checked against such a schema counts.
 */
export function usesUniqueItems(schema: unknown): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (!Array.isArray(node) && (node as { uniqueItems?: unknown }).uniqueItems === true) return true;
    for (const child of Object.values(node)) stack.push(child);
  }
  return false;
}

class Tally {
  bytes = 0;
  work = 0;
  /** Σ of 1 + {@link shallowWeight} over every value: what looking at each once costs. */
  weight = 0;
  /** Per nesting depth: Σ of {@link comparedWeight} over the values there (when profiled). */
  readonly compared: number[] = [];
  /** Per nesting depth: Σ of items × JSON size of the arrays there (when profiled). */
  readonly squares: number[] = [];
  constructor(
    readonly maxBytes: number,
    readonly maxWork: number,
    readonly countArrays: boolean,
    readonly profiled = false,
  ) {}

  get exceeded(): ValidationBound | undefined {
    if (this.bytes > this.maxBytes) return 'bytes';
    return this.work > this.maxWork ? 'unique_items' : undefined;
  }

  /** Adds one value at `depth` of JSON size `size`, holding `shallow` items, members or characters. */
  add(value: unknown, depth: number, size: number, shallow: number): void {
    this.weight += 1 + shallow;
    if (!this.profiled) return;
    this.compared[depth] = (this.compared[depth] ?? 0) + comparedWeight(value, size);
    if (Array.isArray(value)) this.squares[depth] = (this.squares[depth] ?? 0) + size * value.length;
  }
}

/**
 * What a validator's look at the top of one value costs beside the application itself: its items,
 * members, or characters (a pattern, a length, a loop over members reads them all). The same
 * weight for the bound worked out before validation and for the meter during it.
 */
export function shallowWeight(value: unknown): number {
  if (typeof value === 'string' || Array.isArray(value)) return value.length;
  if (typeof value !== 'object' || value === null) return 0;
  let members = 0;
  for (const _key in value) members++;
  return members;
}

/**
 * What comparing a value with one `const` or `enum` value costs: 1 for a string, number, boolean
 * or null (compared natively, reading at most the schema's own value), its JSON size for an
 * array or object (compared member by member).
 */
export function comparedWeight(value: unknown, size: number): number {
  return typeof value === 'object' && value !== null ? size : 1;
}

/**
 * The JSON length of `value` (near enough: numbers as JavaScript writes them, strings without
 * their escapes), adding to the tally as it goes and stopping once a bound is passed. Recursive:
 * every value the gateway checks was bounded in depth when it was parsed (MAX_JSON_DEPTH).
 */
function weigh(value: unknown, tally: Tally, depth: number): number {
  if (typeof value !== 'object' || value === null) {
    const size =
      typeof value === 'string'
        ? value.length + 2
        : typeof value === 'number' || typeof value === 'boolean'
          ? String(value).length
          : 4;
    tally.bytes += size;
    tally.add(value, depth, size, typeof value === 'string' ? value.length : 0);
    return size;
  }
  const array = Array.isArray(value);
  let size = 2;
  let members = 0;
  tally.bytes += 2;
  for (const [key, child] of array ? value.entries() : Object.entries(value)) {
    const keySize = array ? 1 : String(key).length + 4;
    tally.bytes += keySize;
    members++;
    size += keySize + weigh(child, tally, depth + 1);
    if (tally.exceeded !== undefined) return size;
  }
  if (array && tally.countArrays) tally.work += members * size;
  tally.add(value, depth, size, members);
  return size;
}

/**
 * The JSON size of `value`, counted no further than past `cap`: what comparing it whole costs
 * (the meter's charge for `const`, `enum` and `uniqueItems`).
 */
export function sizeWithin(value: unknown, cap: number): number {
  const tally = new Tally(cap, Infinity, false);
  const size = weigh(value, tally, 0);
  return tally.exceeded === undefined ? size : tally.bytes;
}

/** What {@link weighValue} found: a bound passed, and the work the schema's profile allows. */
export interface Weighed {
  /** The bound validating the value would pass (not validated), or undefined when it fits. */
  readonly bound?: ValidationBound | undefined;
  /**
   * An upper bound on the work of validating the value against a schema of this profile (each
   * depth's applications times the weight of the values there), Infinity without a profile.
   */
  readonly work: number;
  /** What looking at each part of the value once costs (Σ of 1 + {@link shallowWeight}). */
  readonly weight: number;
}

/**
 * Weighs `value` before it is validated: its JSON bytes, and (when the schema uses `uniqueItems`,
 * whose cost grows with the square of an array's items) the pairs of items it would compare,
 * weighted by their size. With the schema's {@link CostProfile}, also the most work validating
 * it may cost (when the profile says it is linear), in the same pass over the value.
 */
export function weighValue(
  value: unknown,
  uniqueItems: boolean,
  budget: ValidationBudget = {},
  profile?: CostProfile,
): Weighed {
  const tally = new Tally(
    budget.maxBytes ?? DEFAULT_MAX_CHECKED_BYTES,
    budget.maxUniqueItemsWork ?? DEFAULT_MAX_UNIQUE_ITEMS_WORK,
    uniqueItems,
    profile?.linear !== undefined && profile.compares,
  );
  weigh(value, tally, 0);
  const weight = tally.weight;
  if (tally.exceeded !== undefined) return { bound: tally.exceeded, work: Infinity, weight };
  // Without a profile, or with one that applies subschemas to a value more than a few times,
  // only metering tells the work (it is then Infinity here).
  if (profile?.linear === undefined) return { work: Infinity, weight };
  let work = profile.linear * weight;
  for (const [depth, compared] of tally.compared.entries()) {
    work += times(profile.compared[depth], compared);
    work += times(profile.uniques[depth], tally.squares[depth]);
  }
  return { work, weight };
}

/** count × weight, where a depth no subschema reaches costs nothing (0 × Infinity is not a number). */
function times(count: number | undefined, weight: number | undefined): number {
  return count === undefined || count === 0 || weight === undefined || weight === 0 ? 0 : count * weight;
}

/**
 * Which bound validating `value` would pass, or undefined when it fits the budget: its JSON
 * bytes, and the pairs of items `uniqueItems` would compare ({@link weighValue}).
 */
export function exceededBudget(
  value: unknown,
  uniqueItems: boolean,
  budget: ValidationBudget = {},
): ValidationBound | undefined {
  return weighValue(value, uniqueItems, budget).bound;
}
