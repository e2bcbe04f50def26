/** The members of a tool definition that are hashed, in spec order (section 3, step 1). */
export const HASHED_MEMBERS = [
  'name',
  'title',
  'description',
  'inputSchema',
  'outputSchema',
  'annotations',
] as const;

/** One of the six hashed members. */
export type HashedMember = (typeof HASHED_MEMBERS)[number];

/** A tool definition restricted to the hashed members. */
export type RestrictedTool = Partial<Record<HashedMember, unknown>>;

/**
 * Restricts a tool to the six hashed members. Absent, `null` and `undefined` members are omitted
 * (null and absent are the same, spec section 3); every other value, `""`, `{}` and `false`
 * included, is kept as is. `_meta` and unknown members are dropped.
 */
export function restrictTool(tool: Record<string, unknown>): RestrictedTool {
  return restrictMembers(tool, HASHED_MEMBERS);
}

/**
 * Keeps the named members of an object, in the order named, omitting absent, `null` and
 * `undefined` ones (the rule of every profile: null and absent are the same).
 */
export function restrictMembers<M extends string>(
  item: Readonly<Record<string, unknown>>,
  members: readonly M[],
): Partial<Record<M, unknown>> {
  const restricted: Partial<Record<M, unknown>> = {};
  for (const member of members) {
    const value = item[member];
    if (value !== null && value !== undefined) restricted[member] = value;
  }
  return restricted;
}
