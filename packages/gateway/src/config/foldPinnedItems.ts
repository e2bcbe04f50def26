import { createHash } from 'node:crypto';
import { foldCatalog } from '@toolpin/digest';

/** The published fold of a pinned per-item map: the catalog digest, and the overflow entry beyond 500 keys. */
export interface PinnedFold {
  /** The catalog digest (spec section 5), exactly as the upstream's listing folds. */
  readonly catalog: string;
  /** The digest of the fold's overflow entry (`tools:overflow`): present only beyond 500 keys. */
  readonly overflow?: string;
}

/** The fold's options: the preimage label of the overflow entry, and its key. */
export interface PinnedFoldOptions {
  readonly profile: string;
  readonly overflowKey: string;
}

/**
 * The sorted `key=digest` lines of an already folded map, hashed: how a pin file written before
 * the per-tool map (`pin.tools` holding 500 keys and the overflow entry itself) recomputes its
 * catalog digest. Folding such a map again would fold its overflow entry a second time.
 */
function digestFoldedLines(items: Readonly<Record<string, string>>): string {
  const lines = Object.keys(items)
    .sort()
    .map((key) => `${key}=${items[key] as string}`);
  return 'sha256:' + createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex');
}

/**
 * Folds a pin's per-item map (`pin.tools`, a surface's `items`: every key with its own digest) into
 * the published catalog digest and, beyond 500 keys, the overflow entry the fold made. A map that
 * holds the overflow entry itself (a pin file written before the per-tool map) is already folded:
 * its catalog digest is the hash of its lines, and it has no separate overflow entry.
 */
export function foldPinnedItems(
  items: Readonly<Record<string, string>>,
  options: PinnedFoldOptions,
): PinnedFold {
  if (Object.hasOwn(items, options.overflowKey)) return { catalog: digestFoldedLines(items) };
  const fold = foldCatalog(
    Object.keys(items).map((key) => ({ key, digest: items[key] as string })),
    options,
  );
  const overflow = fold.entries[options.overflowKey];
  return overflow === undefined ? { catalog: fold.digest } : { catalog: fold.digest, overflow };
}
