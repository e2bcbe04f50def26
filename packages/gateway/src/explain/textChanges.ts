import type { RestrictedTool } from '@toolpin/digest';
import { diffWordOps, formatWordDiff, type WordDiffOp } from './wordDiff.js';

/** A word-level diff of one changed text value, at its JSON Pointer in the definition. */
export interface TextChange {
  /** RFC 6901 pointer, e.g. `/description` or `/inputSchema/properties/q/description`. */
  readonly path: string;
  /** `… unchanged words [-deleted-] [+inserted+] …`, for people (formatWordDiff of `ops`). */
  readonly diff: string;
  /** The diff's operations (diffWordOps): what renderers read; server text is only ever a run's `text`. */
  readonly ops: readonly WordDiffOp[];
}

/** Options of {@link textChanges}. */
export interface TextChangesOptions {
  /** Pointers checked besides `paths` (where a whole parent object appeared or vanished). @default [] */
  readonly pointers?: readonly string[];
  /** Also show values that are not text, as a diff of their compact JSON (absent shows nothing). @default false */
  readonly values?: boolean;
}

// Enough to read what changed; a definition with more changes is better read with `toolpin diff`.
const MAX_TEXT_CHANGES = 10;

/** The value at an RFC 6901 pointer of a JSON value; undefined where there is none. */
export function valueAt(value: unknown, pointer: string): unknown {
  let current = value;
  for (const token of pointer.split('/').slice(1)) {
    const name = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, name)) return undefined;
    current = (current as Record<string, unknown>)[name];
  }
  return current;
}

function isText(value: unknown): value is string | undefined {
  return typeof value === 'string' || value === undefined;
}

/**
 * Word diffs of the changed values at `paths` (and `pointers`) between two definitions: text values
 * always, other values as compact JSON when `values` is set. At most ten.
 */
export function textChanges(
  pinned: RestrictedTool | Readonly<Record<string, unknown>>,
  observed: RestrictedTool | Readonly<Record<string, unknown>>,
  paths: readonly string[],
  options: TextChangesOptions = {},
): TextChange[] {
  const changes: TextChange[] = [];
  for (const path of new Set([...(options.pointers ?? []), ...paths])) {
    if (changes.length >= MAX_TEXT_CHANGES) break;
    const before = valueAt(pinned, path);
    const after = valueAt(observed, path);
    if (before === after) continue;
    let ops: WordDiffOp[];
    if (isText(before) && isText(after)) ops = diffWordOps(before ?? '', after ?? '');
    else if (options.values === true) {
      // A whole object that appeared or vanished around a text already shown says nothing more.
      if (changes.some((change) => change.path.startsWith(`${path}/`))) continue;
      ops = diffWordOps(JSON.stringify(before) ?? '', JSON.stringify(after) ?? '');
    } else continue;
    if (ops.length > 0) changes.push({ path, diff: formatWordDiff(ops), ops });
  }
  return changes;
}
