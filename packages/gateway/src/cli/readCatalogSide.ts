import {
  TRACE_PROFILE,
  foldCatalog,
  restrictTool,
  type CatalogSide,
  type RestrictedTool,
} from '@toolpin/digest';
import { extraMembersOf, type ExtraMembers } from '../explain/extraMembers.js';
import { CliInputError } from './cliInputError.js';
import { digestTools } from './digestTools.js';
import { readDocument } from './readDocument.js';
import { toolsFromDocument } from './toolsFromDocument.js';
import { isObject } from '../wire/isObject.js';

/** One side of `toolpin diff`, with the profile it was computed under and its catalog digest. */
export type CatalogSideResult = CatalogSide & {
  profile: string;
  catalog: string;
  /** Key -> members outside the six: as served (a catalog), or pinned by value (a pin file's definitions). */
  extraMembers?: Record<string, ExtraMembers>;
};

const DIGEST = /^sha256:[0-9a-f]{64}$/;

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

function pinProfile(document: Record<string, unknown>, path: string, requested: string | undefined): string {
  const declared = document.profile;
  if (declared !== undefined && typeof declared !== 'string')
    throw new CliInputError(`${path}: profile must be a string`);
  if (declared !== undefined && requested !== undefined && declared !== requested) {
    throw new CliInputError(`${path}: the pin is under profile ${declared}, not ${requested}`);
  }
  return declared ?? requested ?? TRACE_PROFILE;
}

/** A pin file's map of key to digest (`pin.tools`, a surface's `items`). Throws CliInputError naming the field. */
export function digestsOf(value: unknown, field: string, path: string): Record<string, string> {
  if (!isObject(value)) throw new CliInputError(`${path}: ${field} must be a mapping of key to digest`);
  const digests: Record<string, string> = {};
  for (const [key, digest] of Object.entries(value)) {
    if (typeof digest !== 'string' || !DIGEST.test(digest)) {
      throw new CliInputError(
        `${path}: ${field}["${key}"] must be "sha256:" followed by 64 lowercase hex digits`,
      );
    }
    digests[key] = digest;
  }
  return digests;
}

function pinTools(pin: Record<string, unknown>, path: string): Record<string, string> {
  return digestsOf(pin.tools, 'pin.tools', path);
}

function sideFromPin(
  document: Record<string, unknown>,
  path: string,
  requested: string | undefined,
): CatalogSideResult {
  const profile = pinProfile(document, path, requested);
  const pin = document.pin;
  if (!isObject(pin)) throw new CliInputError(`${path}: pin must be a mapping with catalog and tools`);
  if (typeof pin.catalog !== 'string' || !DIGEST.test(pin.catalog)) {
    throw new CliInputError(`${path}: pin.catalog must be "sha256:" followed by 64 lowercase hex digits`);
  }
  const tools = pinTools(pin, path);
  const entries = Object.entries(tools).map(([key, digest]) => ({ key, digest }));
  // Up to 500 entries the fold rules cannot apply again, so the pinned catalog must be the fold
  // of the pinned tools; a mismatch means the file was edited by hand or corrupted.
  if (entries.length <= 500 && foldCatalog(entries, { profile }).digest !== pin.catalog) {
    throw new CliInputError(`${path}: pin.catalog is not the catalog digest of pin.tools under ${profile}`);
  }
  const side: CatalogSideResult = { profile, catalog: pin.catalog, tools };
  if (document.definitions !== undefined) {
    if (!isObject(document.definitions)) throw new CliInputError(`${path}: definitions must be a mapping`);
    const definitions: Record<string, RestrictedTool> = {};
    const extraMembers: Record<string, ExtraMembers> = {};
    for (const [key, definition] of Object.entries(document.definitions)) {
      if (!isObject(definition)) throw new CliInputError(`${path}: definitions["${key}"] must be a mapping`);
      // Prompts and templates are read by readSurfaceSides.
      if (!key.startsWith('tool:')) continue;
      definitions[key] = restrictTool(definition);
      const extras = extraMembersOf(definition);
      if (extras !== undefined) extraMembers[key] = extras;
    }
    side.definitions = definitions;
    side.extraMembers = extraMembers;
  }
  return side;
}

/**
 * Reads one side of `toolpin diff`: a catalog file (bare tools array, tools/list result or JSON-RPC
 * response), digested under `profile` (default TRACE_PROFILE); or a pin file (YAML or JSON with a
 * top-level `pin: {catalog, tools}`, optional `definitions` and `profile`). Throws CliInputError.
 */
export function readCatalogSide(path: string, profile: string | undefined): CatalogSideResult {
  return readCatalogSideOf(readDocument(path), path, profile);
}

/** {@link readCatalogSide} of a document already read. */
export function readCatalogSideOf(
  document: unknown,
  path: string,
  profile: string | undefined,
): CatalogSideResult {
  if (isObject(document) && document.pin !== undefined) return sideFromPin(document, path, profile);
  return sideFromCatalog(document, path, profile ?? TRACE_PROFILE);
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
