import { foldCatalog } from './catalogFold.js';
import { DigestError, describeJsonType, describeTool } from './digestError.js';
import { resolveProfile, type DigestOptions } from './profiles.js';
import { digestTool } from './toolDigest.js';
import { encodeToolKey } from './toolKey.js';

/** One tool of a catalog, in array order. */
export interface ToolEntry {
  /** Position in the tools array. */
  index: number;
  /** The tool's name when it is a string. */
  name: string | undefined;
  /** The fold key (spec section 4). */
  key: string;
  /** The per-tool digest (spec section 3). */
  digest: string;
}

/** Everything derived from one tools array. */
export interface CatalogDigestResult {
  /** The profile label the digests were computed under. */
  profile: string;
  /** The catalog digest (spec section 5). */
  catalog: string;
  /** Per-tool entries in array order, before duplicate and overflow folding. */
  tools: ToolEntry[];
  /** Folded key -> digest, the lines the catalog digest is computed over. */
  entries: Record<string, string>;
  /** Every key -> its digest (duplicates folded, no overflow entry): see CatalogFold.keyed. */
  keyed: Record<string, string>;
}

function withPosition(error: DigestError, index: number, name: string | undefined): DigestError {
  const data = { ...error.data, index, ...(name === undefined ? {} : { name }) };
  const reason = error.data.reason ?? error.message;
  return new DigestError(error.code, `${describeTool(data)} has no digest: ${reason}`, data, {
    cause: error,
  });
}

/**
 * Digests the tools member of a tools/list result: per-tool digests and keys, and the catalog
 * digest. Throws DigestError (DIGEST_TOOLS_NOT_ARRAY, DIGEST_TOOL_NOT_OBJECT,
 * DIGEST_NOT_CANONICAL, DIGEST_TOO_DEEP) on the first bad tool, with data {index, name}.
 */
export function digestCatalog(tools: unknown, options?: DigestOptions): CatalogDigestResult {
  if (!Array.isArray(tools)) {
    const reason = `tools must be a JSON array, got ${describeJsonType(tools)}`;
    throw new DigestError('DIGEST_TOOLS_NOT_ARRAY', reason, { reason });
  }
  const profile = resolveProfile(options);
  const entries: ToolEntry[] = new Array<ToolEntry>(tools.length);
  for (let index = 0; index < tools.length; index++) {
    const tool: unknown = tools[index];
    const rawName = typeof tool === 'object' && tool !== null ? (tool as { name?: unknown }).name : undefined;
    const name = typeof rawName === 'string' ? rawName : undefined;
    let digest: string;
    try {
      digest = digestTool(tool, { profile });
    } catch (error) {
      throw error instanceof DigestError ? withPosition(error, index, name) : error;
    }
    entries[index] = { index, name, key: encodeToolKey(rawName), digest };
  }
  const fold = foldCatalog(entries, { profile });
  return { profile, catalog: fold.digest, tools: entries, entries: fold.entries, keyed: fold.keyed };
}
