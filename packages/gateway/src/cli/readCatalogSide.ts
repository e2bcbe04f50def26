import { TRACE_PROFILE, restrictTool, type CatalogSide, type RestrictedTool } from '@toolpin/digest';
import type { ServerConfig } from '../config/index.js';
import { extraMembersOf, type ExtraMembers } from '../explain/extraMembers.js';
import { CliInputError } from './cliInputError.js';
import { digestTools } from './digestTools.js';
import type { DiffFile } from './readDiffFile.js';
import { toolsFromDocument } from './toolsFromDocument.js';
import { isObject } from '../wire/isObject.js';

/** One side of `toolpin diff`, with the profile it was computed under and its catalog digest. */
export type CatalogSideResult = CatalogSide & {
  profile: string;
  catalog: string;
  /** Key -> members outside the six: as served (a catalog), or pinned by value (a pin file's definitions). */
  extraMembers?: Record<string, ExtraMembers>;
};

function sideFromCatalog(document: unknown, path: string, profile: string): CatalogSideResult {
  const tools = toolsFromDocument(document, path);
  const result = digestTools(tools, profile, path);
  const counts = new Map<string, number>();
  for (const entry of result.tools) counts.set(entry.key, (counts.get(entry.key) ?? 0) + 1);
  const definitions: Record<string, RestrictedTool> = {};
  const extraMembers: Record<string, ExtraMembers> = {};
  // A key shared by several tools has no single definition to compare, so it gets none.
  for (const entry of result.tools) {
    if (counts.get(entry.key) !== 1) continue;
    const tool = tools[entry.index] as Record<string, unknown>;
    definitions[entry.key] = restrictTool(tool);
    const extras = extraMembersOf(tool);
    if (extras !== undefined) extraMembers[entry.key] = extras;
  }
  // Every tool by its own key (beyond 500 too), as a pin file records them.
  return { profile, catalog: result.catalog, tools: result.keyed, definitions, extraMembers };
}

function sideFromPin(server: ServerConfig, path: string, requested: string | undefined): CatalogSideResult {
  if (requested !== undefined && server.profile !== requested)
    throw new CliInputError(`${path}: the pin is under profile ${server.profile}, not ${requested}`);
  return {
    profile: server.profile,
    catalog: server.pin.catalog,
    tools: { ...server.pin.tools },
    definitions: { ...server.definitions },
    extraMembers: { ...server.extraMembers },
  };
}

/**
 * Reads one side of `toolpin diff`: a catalog file (bare tools array, tools/list result or JSON-RPC
 * response), digested under `profile` (default TRACE_PROFILE); or a pin file, as the verifying
 * loader read it (readDiffFile). Throws CliInputError.
 */
export function readCatalogSideOf(file: DiffFile, profile: string | undefined): CatalogSideResult {
  if (file.server !== undefined) return sideFromPin(file.server, file.path, profile);
  return sideFromCatalog(file.document, file.path, profile ?? TRACE_PROFILE);
}

/** True when a document holds tools: a pin file, a tools array, or a tools/list result (or response). */
export function holdsTools(document: unknown): boolean {
  if (Array.isArray(document)) return true;
  if (!isObject(document)) return false;
  return (
    document.pin !== undefined ||
    Array.isArray(document.tools) ||
    (isObject(document.result) && Array.isArray(document.result.tools))
  );
}
