import { canonicalizeJson } from './canonicalizeJson.js';
import { HASHED_MEMBERS } from './restrictTool.js';
import { isObject } from './isObject.js';

/** Escapes one reference token of an RFC 6901 JSON Pointer. */
function escapeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

// undefined stands for an absent member or property here, which equals only itself.
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return canonicalizeJson(a) === canonicalizeJson(b);
}

/** Appends to `out` the pointers of the deepest places where `a` and `b` differ. */
function collectPaths(a: unknown, b: unknown, pointer: string, out: string[]): void {
  if (sameJson(a, b)) return;
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const key of keys) collectPaths(a[key], b[key], `${pointer}/${escapeToken(key)}`, out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) collectPaths(a[i], b[i], `${pointer}/${i}`, out);
    return;
  }
  // Different types, different array lengths, a scalar change, or a member added or removed:
  // the difference is the whole value at this pointer.
  out.push(pointer);
}

/**
 * RFC 6901 pointers, each prefixed with `base`, of the deepest places where two JSON values differ
 * (`undefined` stands for an absent value). Empty when the values are equal.
 */
export function changedPointers(before: unknown, after: unknown, base = ''): string[] {
  const out: string[] = [];
  collectPaths(before, after, base, out);
  return out;
}

/**
 * Which hashed members of two restricted definitions differ, in member order: the tool's six by
 * default, or another profile's list (a prompt's, a template's).
 */
export function changedMembers(
  pinned: Readonly<Record<string, unknown>>,
  observed: Readonly<Record<string, unknown>>,
  members: readonly string[] = HASHED_MEMBERS,
): string[] {
  return members.filter((member) => !sameJson(pinned[member] ?? null, observed[member] ?? null));
}

/** RFC 6901 pointers of every differing leaf between two restricted definitions. */
export function changedPaths(
  pinned: Readonly<Record<string, unknown>>,
  observed: Readonly<Record<string, unknown>>,
  members: readonly string[] = HASHED_MEMBERS,
): string[] {
  const out: string[] = [];
  for (const member of changedMembers(pinned, observed, members)) {
    collectPaths(pinned[member], observed[member], `/${member}`, out);
  }
  return out;
}
