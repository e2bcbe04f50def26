import { digestCatalog, restrictTool, type RestrictedTool } from '@toolpin/digest';
import { extraMembersOf, type ExtraMembers } from '../explain/extraMembers.js';
import type { PinConfig } from './types.js';

/** A pin computed from an observed catalog: what `toolpin pin` writes, and the observed side of a comparison. */
export interface CatalogPin {
  readonly pin: PinConfig;
  /** Key -> restricted definition, for keys that stand for exactly one definition. */
  readonly definitions: Record<string, RestrictedTool>;
  /** Key -> the definition's members outside the six (pinned by value), for keys with a definition and such members. */
  readonly extraMembers: Record<string, ExtraMembers>;
}

/**
 * Digests a catalog (the tools of every page, in order) under `profile` into a pin with its
 * definitions, every member of each recorded. A key shared by several tools (duplicates) or folded
 * into `tools:overflow` has no single definition, so it gets none. Throws DigestError when a tool
 * has no digest.
 */
export function pinFromCatalog(tools: readonly unknown[], profile: string): CatalogPin {
  const result = digestCatalog(tools, { profile });
  const counts = new Map<string, number>();
  for (const entry of result.tools) counts.set(entry.key, (counts.get(entry.key) ?? 0) + 1);
  const definitions: Record<string, RestrictedTool> = {};
  const extraMembers: Record<string, ExtraMembers> = {};
  for (const entry of result.tools) {
    if (counts.get(entry.key) === 1 && result.entries[entry.key] === entry.digest) {
      const tool = tools[entry.index] as Record<string, unknown>;
      definitions[entry.key] = restrictTool(tool);
      const extras = extraMembersOf(tool);
      if (extras !== undefined) extraMembers[entry.key] = extras;
    }
  }
  return { pin: { catalog: result.catalog, tools: result.entries }, definitions, extraMembers };
}
