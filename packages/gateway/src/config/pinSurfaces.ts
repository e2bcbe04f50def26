import {
  digestPrompt,
  digestPromptCatalog,
  digestTemplate,
  digestTemplateCatalog,
  encodePromptKey,
  encodeTemplateKey,
  PROMPT_MEMBERS,
  PROMPT_PROFILE,
  PROMPTS_OVERFLOW_KEY,
  restrictPrompt,
  restrictTemplate,
  TEMPLATE_MEMBERS,
  TEMPLATE_PROFILE,
  TEMPLATES_OVERFLOW_KEY,
  type SurfaceDigestResult,
} from '@toolpin/digest';
import { SURFACE_LISTINGS, type ListedSurface, type SurfaceListing } from '../wire/listedSurfaces.js';
import type { SurfacePinConfig } from './types.js';

/** A pinned surface beside tools: its pin section (`pin.prompts`, `pin.resourceTemplates`). */
export type PinnedSurface = Exclude<ListedSurface, 'tools'>;

/**
 * Everything the pin files and the CLI need to know of one surface beside tools (docs/pin-surfaces.md):
 * how it is listed (its SURFACE_LISTINGS entry, with its item names for messages), and how it is pinned.
 */
export interface PinSurface extends SurfaceListing {
  /** The pin section (`pin.prompts`, `pin.resourceTemplates`): the listed surface's own name. */
  readonly section: PinnedSurface;
  /** The ServerConfig / CatalogPin member holding its definitions. */
  readonly definitions: 'promptDefinitions' | 'templateDefinitions';
  /** The member a key is encoded from. */
  readonly nameMember: 'name' | 'uriTemplate';
  /** The key prefix with its colon. */
  readonly prefix: 'prompt:' | 'template:';
  readonly overflowKey: string;
  /** The preimage label. */
  readonly label: string;
  /** The hashed members, in order. */
  readonly members: readonly string[];
  /** The approve option that names one item. */
  readonly flag: '--prompt' | '--template';
  readonly encodeKey: (name: unknown) => string;
  readonly digest: (item: unknown) => string;
  readonly digestCatalog: (items: unknown) => SurfaceDigestResult;
  readonly restrict: (item: Readonly<Record<string, unknown>>) => Record<string, unknown>;
}

type PinFacts = Omit<PinSurface, keyof SurfaceListing | 'section'>;

/** A surface's pin facts on top of its listing (written once, in wire/listedSurfaces.ts). */
function pinSurface(section: PinnedSurface, facts: PinFacts): PinSurface {
  return { ...SURFACE_LISTINGS[section], section, ...facts };
}

/** The surfaces beside tools, in pin-file order. */
export const PIN_SURFACES: readonly PinSurface[] = [
  pinSurface('prompts', {
    definitions: 'promptDefinitions',
    nameMember: 'name',
    prefix: 'prompt:',
    overflowKey: PROMPTS_OVERFLOW_KEY,
    label: PROMPT_PROFILE,
    members: PROMPT_MEMBERS,
    flag: '--prompt',
    encodeKey: encodePromptKey,
    digest: digestPrompt,
    digestCatalog: digestPromptCatalog,
    restrict: restrictPrompt,
  }),
  pinSurface('resourceTemplates', {
    definitions: 'templateDefinitions',
    nameMember: 'uriTemplate',
    prefix: 'template:',
    overflowKey: TEMPLATES_OVERFLOW_KEY,
    label: TEMPLATE_PROFILE,
    members: TEMPLATE_MEMBERS,
    flag: '--template',
    encodeKey: encodeTemplateKey,
    digest: digestTemplate,
    digestCatalog: digestTemplateCatalog,
    restrict: restrictTemplate,
  }),
];

/** The pin facts of one surface beside tools. */
export function pinSurfaceOf(section: PinnedSurface): PinSurface {
  return PIN_SURFACES.find((candidate) => candidate.section === section) as PinSurface;
}

/** The pin of one surface's listed items and their definitions (keys standing for exactly one item). */
export function pinSurfaceItems(
  surface: PinSurface,
  items: readonly unknown[],
): { pin: SurfacePinConfig; definitions: Record<string, Record<string, unknown>> } {
  const result = surface.digestCatalog(items);
  const counts = new Map<string, number>();
  for (const entry of result.items) counts.set(entry.key, (counts.get(entry.key) ?? 0) + 1);
  const definitions: Record<string, Record<string, unknown>> = {};
  for (const entry of result.items) {
    // A key shared by several items (duplicates) has no single definition.
    if (counts.get(entry.key) === 1)
      definitions[entry.key] = surface.restrict(items[entry.index] as Record<string, unknown>);
  }
  // Every item's own digest; beyond 500 items, the fold's overflow entry beside them.
  const overflow = result.entries[surface.overflowKey];
  const pin = {
    catalog: result.catalog,
    items: result.keyed,
    ...(overflow === undefined ? {} : { overflow }),
  };
  return { pin, definitions };
}
