import type { InstructionsSide } from '../explain/explainInstructions.js';
import { PIN_SURFACES, pinSurfaceItems, type PinnedSurface, type PinSurface } from '../config/pinSurfaces.js';
import type { ServerConfig } from '../config/index.js';
import { instructionsText } from '../config/planSurfaceUpdate.js';
import { CliInputError } from './cliInputError.js';
import type { DiffFile } from './readDiffFile.js';
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

function fromPin(surface: PinSurface, server: ServerConfig): SurfaceSide | undefined {
  const section = server.pin[surface.section];
  if (section === undefined) return undefined;
  return {
    catalog: section.catalog,
    tools: { ...section.items },
    definitions: { ...server[surface.definitions] },
  };
}

/**
 * The prompts, resource templates and instructions one side of `toolpin diff` holds: a pin file's
 * sections (with their definitions and the instructions text), as the verifying loader read them
 * (readDiffFile); or a `prompts/list` / `resources/templates/list` result (digested under their
 * profiles). Throws CliInputError.
 */
export function readSurfaceSides(file: DiffFile): SurfaceSides {
  const sides: { -readonly [K in keyof SurfaceSides]: SurfaceSides[K] } = {};
  const { server } = file;
  for (const surface of PIN_SURFACES) {
    if (server !== undefined) {
      const side = fromPin(surface, server);
      if (side !== undefined) sides[surface.section] = side;
      continue;
    }
    const items = listedItems(file.document, surface.section);
    if (items !== undefined) sides[surface.section] = fromListing(surface, items, file.path);
  }
  const digest = server?.pin.instructions;
  if (digest !== undefined)
    sides.instructions = { digest, text: instructionsText(digest, server?.instructions) };
  return sides;
}
