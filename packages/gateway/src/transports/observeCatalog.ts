import { digestTool } from '@toolpin/digest';
import { pinFromCatalog, pinFromSurfaces, type CatalogPin } from '../config/pinFromCatalog.js';
import { PIN_SURFACES, type PinnedSurface } from '../config/pinSurfaces.js';
import type { LiveCatalog } from './fetchLiveCatalog.js';

/** A tool (prompt, template) of a live catalog that has no digest (the gateway blocks it as unverifiable). */
export interface UnverifiableTool {
  readonly index: number;
  readonly name: string | null;
  readonly problem: string;
  /** Set for a prompt or resource template; absent for a tool. */
  readonly surface?: PinnedSurface;
}

/** Which surfaces beside tools to observe. */
export interface SurfaceChoice {
  readonly prompts: boolean;
  readonly resourceTemplates: boolean;
  readonly instructions: boolean;
}

/** Splits items into those that have a digest and those that do not (with why). */
function partition(
  items: readonly unknown[],
  digest: (item: unknown) => unknown,
  nameMember: string,
): { digestible: unknown[]; unverifiable: UnverifiableTool[] } {
  const digestible: unknown[] = [];
  const unverifiable: UnverifiableTool[] = [];
  items.forEach((item, index) => {
    try {
      digest(item);
      digestible.push(item);
    } catch (error) {
      const name = (item as Record<string, unknown> | null)?.[nameMember];
      unverifiable.push({
        index,
        name: typeof name === 'string' ? name : null,
        problem: error instanceof Error ? error.message : String(error),
      });
    }
  });
  return { digestible, unverifiable };
}

/** A live catalog digested for comparison: the pin of its digestible tools, and the others. */
export interface ObservedCatalog extends CatalogPin {
  readonly unverifiable: readonly UnverifiableTool[];
}

/** Digests a live catalog under `profile`, setting aside the tools that cannot be digested instead of failing on the first. */
export function observeCatalog(tools: readonly unknown[], profile: string): ObservedCatalog {
  const { digestible, unverifiable } = partition(tools, (tool) => digestTool(tool, { profile }), 'name');
  return { ...pinFromCatalog(digestible, profile), unverifiable };
}

/**
 * Digests a live listing: its tools, and the surfaces of `choice` (a surface the server does not
 * offer is observed empty: nothing served), setting aside items that cannot be digested.
 */
export function observeLive(live: LiveCatalog, profile: string, choice: SurfaceChoice): ObservedCatalog {
  const tools = observeCatalog(live.tools, profile);
  const unverifiable = [...tools.unverifiable];
  const listed: { -readonly [K in PinnedSurface]?: unknown[] } = {};
  for (const surface of PIN_SURFACES) {
    if (!choice[surface.section]) continue;
    const split = partition(live.surfaces[surface.section]?.items ?? [], surface.digest, surface.nameMember);
    listed[surface.section] = split.digestible;
    unverifiable.push(...split.unverifiable.map((item) => ({ ...item, surface: surface.section })));
  }
  const observed = pinFromSurfaces(tools, {
    ...listed,
    ...(choice.instructions ? { instructions: { text: live.instructions } } : {}),
  });
  return { ...observed, unverifiable };
}
