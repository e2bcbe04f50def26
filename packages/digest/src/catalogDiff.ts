import { changedMembers, changedPaths } from './definitionPaths.js';
import type { RestrictedTool } from './restrictTool.js';

/** One side of a comparison: folded key -> digest, and optionally the restricted definitions. */
export interface CatalogSide {
  /** Folded key -> digest (the `entries` of a catalog digest, or the `tools` of a pin). */
  tools: Record<string, string>;
  /** Key -> restricted definition, when the side holds definitions and not only digests. */
  definitions?: Record<string, RestrictedTool>;
}

/** Options of {@link diffCatalogs}. */
export interface DiffOptions {
  /**
   * The hashed members of one definition, in order (a prompt's or template's for those surfaces).
   * @default HASHED_MEMBERS (a tool's six)
   */
  members?: readonly string[];
}

/** A key present on both sides with different digests. */
export interface ToolChange {
  key: string;
  /** The tool's name, from the observed (else the pinned) definition, when known. */
  name?: string;
  pinned: string;
  observed: string;
  /** The hashed members that differ, when both sides hold the definition (of `members` when given). */
  members?: string[];
  /** RFC 6901 pointers of the differing values, e.g. "/inputSchema/properties/q/type". */
  paths?: string[];
}

/** The result of comparing a pinned side with an observed one. */
export interface CatalogDiff {
  /** Same keys with the same digests. */
  equal: boolean;
  /** Both sides non-empty and no observed key is pinned: another server's catalog. */
  wrongSubject: boolean;
  changed: ToolChange[];
  added: { key: string; digest: string }[];
  removed: { key: string; digest: string }[];
  unchanged: string[];
}

/** The definition a catalog side records under a tool key; undefined when it records none. */
export function definitionOf(side: CatalogSide, key: string): RestrictedTool | undefined {
  return side.definitions !== undefined && Object.hasOwn(side.definitions, key)
    ? side.definitions[key]
    : undefined;
}

function describeChange(
  key: string,
  pinned: CatalogSide,
  observed: CatalogSide,
  members: readonly string[] | undefined,
): ToolChange {
  const change: ToolChange = {
    key,
    pinned: pinned.tools[key] as string,
    observed: observed.tools[key] as string,
  };
  const before = definitionOf(pinned, key);
  const after = definitionOf(observed, key);
  const name = after?.name ?? before?.name;
  if (typeof name === 'string') change.name = name;
  if (before !== undefined && after !== undefined) {
    change.members = changedMembers(before, after, members);
    change.paths = changedPaths(before, after, members);
  }
  return change;
}

/**
 * Compares a pinned catalog side with an observed one key by key: changed, added, removed and
 * unchanged tools (sorted by key; prompts or templates with `options.members`), and whether the observed catalog is another subject entirely.
 */
export function diffCatalogs(pinned: CatalogSide, observed: CatalogSide, options?: DiffOptions): CatalogDiff {
  const diff: CatalogDiff = {
    equal: true,
    wrongSubject: false,
    changed: [],
    added: [],
    removed: [],
    unchanged: [],
  };
  const pinnedKeys = Object.keys(pinned.tools).sort();
  const observedKeys = Object.keys(observed.tools).sort();
  for (const key of observedKeys) {
    const digest = observed.tools[key] as string;
    if (!Object.hasOwn(pinned.tools, key)) diff.added.push({ key, digest });
    else if (pinned.tools[key] === digest) diff.unchanged.push(key);
    else diff.changed.push(describeChange(key, pinned, observed, options?.members));
  }
  for (const key of pinnedKeys) {
    if (!Object.hasOwn(observed.tools, key)) diff.removed.push({ key, digest: pinned.tools[key] as string });
  }
  diff.equal = diff.changed.length === 0 && diff.added.length === 0 && diff.removed.length === 0;
  diff.wrongSubject =
    pinnedKeys.length > 0 && observedKeys.length > 0 && diff.added.length === observedKeys.length;
  return diff;
}
