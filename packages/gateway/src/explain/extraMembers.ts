import { canonicalizeJson, HASHED_MEMBERS, type RestrictedTool } from '@toolpin/digest';

/**
 * The members of a tool definition outside the six the digest covers (`icons`, `execution`,
 * `_meta`, vendor keys), by name. A pin records them by value: a change is drift, and a member
 * the pin does not record never reaches a client.
 */
export type ExtraMembers = Readonly<Record<string, unknown>>;

/** A whole pinned definition as a pin file holds it: the six hashed members, then the extra members. */
export type PinnedDefinition = Readonly<Record<string, unknown>>;

const HASHED: ReadonlySet<string> = new Set(HASHED_MEMBERS);

/** True for a member the digest covers (name, title, description, inputSchema, outputSchema, annotations). */
export function isHashedMember(member: string): boolean {
  return HASHED.has(member);
}

/**
 * The members of `tool` outside the six, values as given (not copied); undefined when there are
 * none. A member whose value is `null` is absent, as the digest treats its own members.
 */
export function extraMembersOf(tool: Readonly<Record<string, unknown>>): Record<string, unknown> | undefined {
  let extras: Record<string, unknown> | undefined;
  for (const member of Object.keys(tool)) {
    const value = tool[member];
    if (value === null || value === undefined || HASHED.has(member)) continue;
    // defineProperty: a member named "__proto__" stays a member, as JSON.parse made it.
    extras ??= {};
    Object.defineProperty(extras, member, { value, enumerable: true, writable: true, configurable: true });
  }
  return extras;
}

/**
 * A pinned definition as a pin file holds it: the six hashed members in spec order, then the
 * extra members sorted by name, so that pinning the same catalog twice writes the same bytes.
 */
export function joinDefinition(
  definition: RestrictedTool,
  extras: ExtraMembers | undefined,
): PinnedDefinition {
  const entries: [string, unknown][] = [];
  for (const member of HASHED_MEMBERS) {
    const value = definition[member];
    if (value !== undefined && value !== null) entries.push([member, value]);
  }
  if (extras !== undefined) {
    for (const member of Object.keys(extras).sort()) {
      const value = extras[member];
      if (value !== undefined && value !== null && !HASHED.has(member)) entries.push([member, value]);
    }
  }
  return Object.fromEntries(entries);
}

/**
 * True when two JSON values are equal by their RFC 8785 form (member order and number spelling do
 * not matter); `undefined` (absent) equals only itself, and a value without a canonical form
 * equals nothing.
 */
export function sameJsonValue(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return a === b;
  try {
    return canonicalizeJson(a) === canonicalizeJson(b);
  } catch {
    return false;
  }
}
