import { digestTool } from '@toolpin/digest';
import { pinFromCatalog, type CatalogPin } from '../config/pinFromCatalog.js';

/** A tool of a live catalog that has no digest (the gateway blocks it as unverifiable). */
export interface UnverifiableTool {
  readonly index: number;
  readonly name: string | null;
  readonly problem: string;
}

/** A live catalog digested for comparison: the pin of its digestible tools, and the others. */
export interface ObservedCatalog extends CatalogPin {
  readonly unverifiable: readonly UnverifiableTool[];
}

/** Digests a live catalog under `profile`, setting aside the tools that cannot be digested instead of failing on the first. */
export function observeCatalog(tools: readonly unknown[], profile: string): ObservedCatalog {
  const digestible: unknown[] = [];
  const unverifiable: UnverifiableTool[] = [];
  tools.forEach((tool, index) => {
    try {
      digestTool(tool, { profile });
      digestible.push(tool);
    } catch (error) {
      const name = (tool as { name?: unknown } | null)?.name;
      unverifiable.push({
        index,
        name: typeof name === 'string' ? name : null,
        problem: error instanceof Error ? error.message : String(error),
      });
    }
  });
  return { ...pinFromCatalog(digestible, profile), unverifiable };
}
