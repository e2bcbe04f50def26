import { resolveProfile, type DigestOptions } from './profiles.js';
import { sha256Digest } from './sha256.js';

/** Beyond this many entries the rest fold into one overflow entry (spec section 5). */
export const MAX_CATALOG_ENTRIES = 500;

/** The key of the entry that holds every tool entry beyond {@link MAX_CATALOG_ENTRIES}. */
export const TOOLS_OVERFLOW_KEY = 'tools:overflow';

/** Options of {@link foldCatalog}: the profile label, and the key of the overflow entry. */
export interface FoldOptions extends DigestOptions {
  /**
   * The key of the entry that holds every entry beyond the first 500 (`prompts:overflow`,
   * `templates:overflow` for the other surfaces).
   * @default 'tools:overflow'
   */
  overflowKey?: string;
}

/** The folded catalog: its digest and the entries it was folded from. */
export interface CatalogFold {
  /** `sha256:` + hex SHA-256 of the sorted `key=digest` lines. */
  digest: string;
  /** Folded key -> digest, including duplicate and `tools:overflow` entries. */
  entries: Record<string, string>;
  /**
   * Every key -> its digest, duplicates folded, before the overflow rule: the per-tool map the
   * fold reads (spec section 5). The same as `entries` up to 500 keys; beyond, it still names every
   * tool, where `entries` holds 500 and the overflow entry.
   */
  keyed: Record<string, string>;
}

// Sorting with the default comparator is code-unit order; keys are printable ASCII (section 4),
// so this is also code-point and byte order.
function groupByKey(tools: readonly { key: string; digest: string }[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const { key, digest } of tools) {
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [digest]);
    else group.push(digest);
  }
  return groups;
}

/** One entry for one or more same-key digests (spec section 5, first edge rule). */
function foldDuplicates(digests: string[], profile: string): string {
  if (digests.length === 1) return digests[0] as string;
  return sha256Digest(`${profile}.duplicates\n` + digests.sort().join('\n'));
}

function lines(keys: readonly string[], entries: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += (i > 0 ? '\n' : '') + key + '=' + (entries[key] as string);
  }
  return out;
}

/**
 * Folds per-item `{key, digest}` pairs into the catalog digest (spec section 5): same-key
 * duplicates fold into one entry, entries beyond the first 500 sorted keys fold into
 * `tools:overflow` (or `options.overflowKey`), then the sorted `key=digest` lines are hashed.
 */
export function foldCatalog(
  tools: readonly { key: string; digest: string }[],
  options?: FoldOptions,
): CatalogFold {
  const profile = resolveProfile(options);
  const overflowKey = options?.overflowKey ?? TOOLS_OVERFLOW_KEY;
  const groups = groupByKey(tools);
  const keys = [...groups.keys()].sort();
  // Built in sorted key order so that serializing the entries reads like the fold. Every key
  // comes from encodeFoldKey and carries a "<prefix>:" prefix, so none can be "__proto__".
  const folded: Record<string, string> = {};
  for (const key of keys) folded[key] = foldDuplicates(groups.get(key) as string[], profile);
  if (keys.length <= MAX_CATALOG_ENTRIES)
    return { digest: sha256Digest(lines(keys, folded)), entries: folded, keyed: folded };

  const kept = keys.slice(0, MAX_CATALOG_ENTRIES);
  const entries: Record<string, string> = {};
  for (const key of kept) entries[key] = folded[key] as string;
  entries[overflowKey] = sha256Digest(
    `${profile}.overflow\n` + lines(keys.slice(MAX_CATALOG_ENTRIES), folded),
  );
  const foldedKeys = [...kept, overflowKey].sort();
  return { digest: sha256Digest(lines(foldedKeys, entries)), entries, keyed: folded };
}
