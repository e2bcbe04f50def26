import {
  digestCatalog,
  digestInstructions,
  restrictTool,
  TOOLS_OVERFLOW_KEY,
  type RestrictedPrompt,
  type RestrictedTemplate,
  type RestrictedTool,
} from '@toolpin/digest';
import { PIN_SURFACES, pinSurfaceItems } from './pinSurfaces.js';
import { extraMembersOf, type ExtraMembers } from '../explain/extraMembers.js';
import type { PinConfig } from './types.js';

/** A pin computed from an observed catalog: what `toolpin pin` writes, and the observed side of a comparison. */
export interface CatalogPin {
  readonly pin: PinConfig;
  /** Key -> restricted definition, for keys that stand for exactly one definition. */
  readonly definitions: Record<string, RestrictedTool>;
  /** Key -> the definition's members outside the six (pinned by value), for keys with a definition and such members. */
  readonly extraMembers: Record<string, ExtraMembers>;
  /** `prompt:` key -> restricted prompt, when prompts were observed (`pin.prompts` set). */
  readonly promptDefinitions?: Record<string, RestrictedPrompt>;
  /** `template:` key -> restricted resource template, when templates were observed. */
  readonly templateDefinitions?: Record<string, RestrictedTemplate>;
  /** The instructions text, when instructions were observed and the server sent a text. */
  readonly instructions?: string;
}

/** The surfaces beside tools observed on a server: each listed whole, or absent when not observed. */
export interface ObservedSurfaces {
  readonly prompts?: readonly unknown[];
  readonly resourceTemplates?: readonly unknown[];
  /** Present when the instructions were observed: `text` undefined when the server sent none. */
  readonly instructions?: { readonly text: string | undefined };
}

/**
 * Digests a catalog (the tools of every page, in order) under `profile` into a pin with its
 * definitions, every member of each recorded: the published catalog digest, every tool's own
 * digest (`pin.tools`, however many), and beyond 500 tools the fold's `tools:overflow` entry
 * (`pin.overflow`). A key shared by several tools (duplicates) has no single definition, so it gets
 * none. Throws DigestError when a tool has no digest.
 */
export function pinFromCatalog(tools: readonly unknown[], profile: string): CatalogPin {
  const result = digestCatalog(tools, { profile });
  const counts = new Map<string, number>();
  for (const entry of result.tools) counts.set(entry.key, (counts.get(entry.key) ?? 0) + 1);
  const definitions: Record<string, RestrictedTool> = {};
  const extraMembers: Record<string, ExtraMembers> = {};
  for (const entry of result.tools) {
    if (counts.get(entry.key) === 1) {
      const tool = tools[entry.index] as Record<string, unknown>;
      definitions[entry.key] = restrictTool(tool);
      const extras = extraMembersOf(tool);
      if (extras !== undefined) extraMembers[entry.key] = extras;
    }
  }
  const overflow = result.entries[TOOLS_OVERFLOW_KEY];
  const pin = {
    catalog: result.catalog,
    tools: result.keyed,
    ...(overflow === undefined ? {} : { overflow }),
  };
  return { pin, definitions, extraMembers };
}

/**
 * Adds the observed surfaces beside tools to a pin: `pin.prompts` and `pin.resourceTemplates` with
 * their definitions, `pin.instructions` with the text. A surface not observed is left out (not
 * pinned). Throws DigestError when an item has no digest.
 */
export function pinFromSurfaces(base: CatalogPin, observed: ObservedSurfaces): CatalogPin {
  let pin = base.pin;
  let result: CatalogPin = base;
  for (const surface of PIN_SURFACES) {
    const items = observed[surface.section];
    if (items === undefined) continue;
    const pinned = pinSurfaceItems(surface, items);
    pin = { ...pin, [surface.section]: pinned.pin };
    result = { ...result, [surface.definitions]: pinned.definitions };
  }
  if (observed.instructions !== undefined) {
    const { text } = observed.instructions;
    pin = { ...pin, instructions: digestInstructions(text) };
    if (text !== undefined) result = { ...result, instructions: text };
  }
  return { ...result, pin };
}
