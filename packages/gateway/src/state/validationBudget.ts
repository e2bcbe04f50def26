import type { ValidationBound } from '../policy/schemaProblems.js';
import { DEFAULT_MAX_CHECKED_BYTES, DEFAULT_MAX_UNIQUE_ITEMS_WORK } from '../defaults.js';

/** What validating one value against a pinned schema may cost, checked before it runs. */
export interface ValidationBudget {
  /** Bound on the value's JSON, in bytes. @default 4 MiB ({@link DEFAULT_MAX_CHECKED_BYTES}) */
  readonly maxBytes?: number;
  /**
   * Bound on Σ items × JSON bytes over the value's arrays, when the schema uses `uniqueItems`.
   * @default 16 Mi ({@link DEFAULT_MAX_UNIQUE_ITEMS_WORK})
   */
  readonly maxUniqueItemsWork?: number;
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
  constructor(
    readonly maxBytes: number,
    readonly maxWork: number,
    readonly countArrays: boolean,
  ) {}

  get exceeded(): ValidationBound | undefined {
    if (this.bytes > this.maxBytes) return 'bytes';
    return this.work > this.maxWork ? 'unique_items' : undefined;
  }
}

/**
 * The JSON length of `value` (near enough: numbers as JavaScript writes them, strings without
 * their escapes), adding to the tally as it goes and stopping once a bound is passed. Recursive:
 * every value the gateway checks was bounded in depth when it was parsed (MAX_JSON_DEPTH).
 */
function weigh(value: unknown, tally: Tally): number {
  let size: number;
  if (typeof value === 'string') size = value.length + 2;
  else if (typeof value === 'number' || typeof value === 'boolean') size = String(value).length;
  else if (typeof value !== 'object' || value === null) size = 4;
  else {
    const array = Array.isArray(value);
    size = 2;
    tally.bytes += 2;
    for (const [key, child] of array ? value.entries() : Object.entries(value)) {
      const keySize = array ? 1 : String(key).length + 4;
      tally.bytes += keySize;
      size += keySize + weigh(child, tally);
      if (tally.exceeded !== undefined) return size;
    }
    if (array && tally.countArrays) tally.work += (value as unknown[]).length * size;
    return size;
  }
  tally.bytes += size;
  return size;
}

/**
 * Which bound validating `value` would pass, or undefined when it fits the budget: its JSON
 * bytes, and (when the schema uses `uniqueItems`, whose cost grows with the square of an array's
 * items) the pairs of items it would compare, weighted by their size.
 */
export function exceededBudget(
  value: unknown,
  uniqueItems: boolean,
  budget: ValidationBudget = {},
): ValidationBound | undefined {
  const tally = new Tally(
    budget.maxBytes ?? DEFAULT_MAX_CHECKED_BYTES,
    budget.maxUniqueItemsWork ?? DEFAULT_MAX_UNIQUE_ITEMS_WORK,
    uniqueItems,
  );
  weigh(value, tally);
  return tally.exceeded;
}
