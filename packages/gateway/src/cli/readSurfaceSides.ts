import { digestInstructions, foldCatalog, MAX_CATALOG_ENTRIES } from '@toolpin/digest';
import type { InstructionsSide } from '../explain/explainInstructions.js';
import { PIN_SURFACES, pinSurfaceItems, type PinnedSurface, type PinSurface } from '../config/pinSurfaces.js';
import { CliInputError } from './cliInputError.js';
import { digestsOf } from './readCatalogSide.js';
import { isObject } from '../wire/isObject.js';

/** One surface beside tools on one side of `toolpin diff`: its catalog digest, digests and definitions. */
export interface SurfaceSide {
  readonly catalog: string;
  readonly tools: Record<string, string>;
  readonly definitions: Record<string, Record<string, unknown>>;
}

/** The surfaces beside tools one side of `toolpin diff` holds. */
export type SurfaceSides = Partial<Record<PinnedSurface, SurfaceSide>> & { instructions?: InstructionsSide };

/** The items array of a listing document for a surface: `{prompts: […]}`, or a JSON-RPC response's result. */
function listedItems(document: unknown, member: string): unknown[] | undefined {
  if (!isObject(document)) return undefined;
  if (Array.isArray(document[member])) return document[member] as unknown[];
  if (isObject(document.result) && Array.isArray(document.result[member]))
    return document.result[member] as unknown[];
  return undefined;
}

function fromListing(surface: PinSurface, items: unknown[], path: string): SurfaceSide {
  try {
    const pinned = pinSurfaceItems(surface, items);
    return { catalog: pinned.pin.catalog, tools: pinned.pin.items, definitions: pinned.definitions };
  } catch (error) {
    throw new CliInputError(`${path}: ${(error as Error).message}`, { cause: error });
  }
}

function fromPin(
  surface: PinSurface,
  document: Record<string, unknown>,
  path: string,
): SurfaceSide | undefined {
  const pin = document.pin as Record<string, unknown>;
  const section = pin[surface.section];
  if (section === undefined) return undefined;
  if (!isObject(section) || typeof section.catalog !== 'string')
    throw new CliInputError(`${path}: pin.${surface.section} must be a mapping with catalog and items`);
  const tools = digestsOf(section.items, `pin.${surface.section}.items`, path);
  const entries = Object.entries(tools).map(([key, digest]) => ({ key, digest }));
  // As for tools: up to 500 entries the catalog must be the fold of the items (else hand-edited).
  const fold = foldCatalog(entries, { profile: surface.label, overflowKey: surface.overflowKey });
  if (entries.length <= MAX_CATALOG_ENTRIES && fold.digest !== section.catalog)
    throw new CliInputError(`${path}: pin.${surface.section}.catalog is not the fold of its items`);
  const definitions: Record<string, Record<string, unknown>> = {};
  const written = isObject(document.definitions) ? document.definitions : {};
  for (const [key, definition] of Object.entries(written))
    if (key.startsWith(surface.prefix) && isObject(definition))
      definitions[key] = surface.restrict(definition);
  return { catalog: section.catalog, tools, definitions };
}

/**
 * The prompts, resource templates and instructions one side of `toolpin diff` holds: a pin file's
 * sections (with their definitions and the instructions text), or a `prompts/list` /
 * `resources/templates/list` result (digested under their profiles). Throws CliInputError.
 */
export function readSurfaceSides(document: unknown, path: string): SurfaceSides {
  const sides: { -readonly [K in keyof SurfaceSides]: SurfaceSides[K] } = {};
  const isPin = isObject(document) && isObject(document.pin);
  for (const surface of PIN_SURFACES) {
    if (isPin) {
      const side = fromPin(surface, document as Record<string, unknown>, path);
      if (side !== undefined) sides[surface.section] = side;
      continue;
    }
    const items = listedItems(document, surface.section);
    if (items !== undefined) sides[surface.section] = fromListing(surface, items, path);
  }
  if (isPin) {
    const pin = (document as { pin: Record<string, unknown> }).pin;
    const text = (document as { instructions?: unknown }).instructions;
    if (typeof pin.instructions === 'string')
      sides.instructions = {
        digest: pin.instructions,
        text:
          typeof text === 'string'
            ? text
            : pin.instructions === digestInstructions(undefined)
              ? null
              : undefined,
      };
  }
  return sides;
}
