import { canonicalizeJson, type RestrictedTool } from '@toolpin/digest';

/** A removed or added tool: its fold key and, when known, its definition. */
export interface RenameCandidate {
  readonly key: string;
  readonly definition?: RestrictedTool | undefined;
}

/** A pinned tool served again under another name, with every other hashed member identical. */
export interface DetectedRename {
  /** The pinned (removed) key. */
  readonly from: string;
  /** The observed (added) key. */
  readonly to: string;
}

// The canonical form of everything but the name, or undefined when it has none (a definition
// that cannot be canonicalized cannot be shown to equal anything).
function shapeOf(definition: RestrictedTool | undefined): string | undefined {
  if (definition === undefined) return undefined;
  const rest: Record<string, unknown> = { ...definition };
  delete rest.name;
  try {
    return canonicalizeJson(rest);
  } catch {
    return undefined;
  }
}

/**
 * Pairs removed keys with added keys whose definitions are identical but for the name. Each key
 * is used at most once, matched in key order, so the result is the same for the same input.
 * Keys without a definition on either side never match: a rename needs both to be shown.
 */
export function detectRenames(
  removed: readonly RenameCandidate[],
  added: readonly RenameCandidate[],
): DetectedRename[] {
  const byShape = new Map<string, string[]>();
  for (const candidate of [...added].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
    const shape = shapeOf(candidate.definition);
    if (shape === undefined) continue;
    const keys = byShape.get(shape);
    if (keys === undefined) byShape.set(shape, [candidate.key]);
    else keys.push(candidate.key);
  }
  const renames: DetectedRename[] = [];
  for (const candidate of [...removed].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
    const shape = shapeOf(candidate.definition);
    const to = shape === undefined ? undefined : byShape.get(shape)?.shift();
    if (to !== undefined) renames.push({ from: candidate.key, to });
  }
  return renames;
}
