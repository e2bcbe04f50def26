import { canonicalizeJson } from './canonicalizeJson.js';
import { foldCatalog } from './catalogFold.js';
import { DigestError, describeItem, describeJsonType } from './digestError.js';
import { encodeFoldKey } from './foldKey.js';
import { sha256Digest } from './sha256.js';
import { isObject } from './isObject.js';

/**
 * One listed surface other than tools, digested in the shape of the tool derivation: restrict to
 * named members, RFC 8785, SHA-256 under a label, a key per item, the sorted fold.
 */
export interface SurfaceProfile<R> {
  /** What one item is called in messages: `prompt`, `resource template`. */
  readonly noun: string;
  /** The preimage label. */
  readonly label: string;
  /** The preimage member that holds the restricted item: `{"profile":…,"<member>":…}`. */
  readonly member: string;
  /** The member whose value is encoded into the key (`name`, `uriTemplate`). */
  readonly nameMember: string;
  /** The key prefix, before `:`. */
  readonly keyPrefix: string;
  /** The fold's overflow key. */
  readonly overflowKey: string;
  /** Restricts one item to its hashed members. */
  readonly restrict: (item: Readonly<Record<string, unknown>>) => R;
}

/** One item of a digested listing, in array order. */
export interface SurfaceEntry {
  /** Position in the listed array. */
  index: number;
  /** The item's name (a template's `uriTemplate`) when it is a string. */
  name: string | undefined;
  /** The fold key (`prompt:<name>`, `template:<uriTemplate>`). */
  key: string;
  /** The per-item digest. */
  digest: string;
}

/** Everything derived from one listed array of a surface. */
export interface SurfaceDigestResult {
  /** The preimage label the digests were computed under. */
  profile: string;
  /** The catalog digest of the surface: the sorted fold of its entries. */
  catalog: string;
  /** Per-item entries in array order, before duplicate and overflow folding. */
  items: SurfaceEntry[];
  /** Folded key -> digest, the lines the catalog digest is computed over. */
  entries: Record<string, string>;
  /** Every key -> its digest (duplicates folded, no overflow entry): see CatalogFold.keyed. */
  keyed: Record<string, string>;
}

function nameOf(surface: SurfaceProfile<unknown>, item: unknown): string | undefined {
  const value = isObject(item) ? item[surface.nameMember] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The key of one item: the prefix and its name member, encoded as tool names are. */
export function surfaceKey(surface: SurfaceProfile<unknown>, item: unknown): string {
  return encodeFoldKey(surface.keyPrefix, isObject(item) ? item[surface.nameMember] : undefined);
}

/**
 * The digest of one item: `sha256:` + hex over the JCS form of `{"profile":<label>,"<member>":
 * <restricted>}`. Throws DigestError DIGEST_ITEM_NOT_OBJECT, DIGEST_NOT_CANONICAL or
 * DIGEST_TOO_DEEP (naming the item).
 */
export function digestSurfaceItem<R>(surface: SurfaceProfile<R>, item: unknown, index?: number): string {
  const position = index === undefined ? {} : { index };
  const name = nameOf(surface, item);
  const named = name === undefined ? position : { ...position, name };
  if (!isObject(item)) {
    const reason = `a ${surface.noun} must be a JSON object, got ${describeJsonType(item)}`;
    const data = { ...position, reason };
    throw new DigestError('DIGEST_ITEM_NOT_OBJECT', `${describeItem(surface.noun, data)}: ${reason}`, data);
  }
  try {
    return sha256Digest(
      canonicalizeJson({ profile: surface.label, [surface.member]: surface.restrict(item) }),
    );
  } catch (caught) {
    if (!(caught instanceof DigestError)) throw caught;
    const data = { ...named, ...caught.data };
    const reason = caught.data.reason ?? caught.message;
    const message = `${describeItem(surface.noun, data)} has no digest: ${reason}`;
    throw new DigestError(caught.code, message, data, { cause: caught });
  }
}

/**
 * Digests a listed array of a surface: per-item digests and keys, and the surface's catalog
 * digest (duplicates and overflow as for tools). Throws DigestError DIGEST_ITEMS_NOT_ARRAY, or the
 * first bad item's error with data {index, name}.
 */
export function digestSurfaceItems<R>(surface: SurfaceProfile<R>, list: unknown): SurfaceDigestResult {
  if (!Array.isArray(list)) {
    const reason = `a list of ${surface.noun}s must be a JSON array, got ${describeJsonType(list)}`;
    throw new DigestError('DIGEST_ITEMS_NOT_ARRAY', reason, { reason });
  }
  const items: SurfaceEntry[] = list.map((item: unknown, index) => ({
    index,
    name: nameOf(surface, item),
    key: surfaceKey(surface, item),
    digest: digestSurfaceItem(surface, item, index),
  }));
  const fold = foldCatalog(items, { profile: surface.label, overflowKey: surface.overflowKey });
  return { profile: surface.label, catalog: fold.digest, items, entries: fold.entries, keyed: fold.keyed };
}
