import {
  canonicalizeJson,
  digestInstructions,
  digestTool,
  encodeToolKey,
  INSTRUCTIONS_PROFILE,
  MAX_CATALOG_ENTRIES,
  TOOLS_OVERFLOW_KEY,
} from '@toolpin/digest';
import { foldPinnedItems } from './foldPinnedItems.js';
import { PIN_SURFACES, type PinnedSurface, type PinSurface } from './pinSurfaces.js';
import { invalidField } from './configError.js';
import { extraMembersOf } from '../explain/extraMembers.js';
import { formatFieldPath } from './fieldPath.js';
import type { PinFileData } from './pinFileSchema.js';

/**
 * The checks that relate a pin file's members, which a schema cannot express: each catalog digest
 * is the published fold of `pin.tools` (and `pin.prompts.items`, `pin.resourceTemplates.items`),
 * the per-item map that names every item; beyond 500 keys `overflow` is the fold's overflow entry
 * (a file written before the per-item map holds that entry in the map itself, beside exactly 500
 * keys); every definition hashes to its pinned digest (tools under the file's profile, the other
 * surfaces under their own labels), and the instructions text hashes to `pin.instructions`.
 * Throws GW_PIN_FILE_INVALID naming the field.
 */
export function verifyPin(data: PinFileData, file: string): void {
  const tools = { catalog: data.pin.catalog, items: data.pin.tools, overflow: data.pin.overflow };
  verifyFold(['pin'], tools, { overflowKey: TOOLS_OVERFLOW_KEY, noun: 'tool:', label: data.profile }, file);
  for (const surface of PIN_SURFACES) {
    const pinned = data.pin[surface.section];
    if (pinned !== undefined)
      verifyFold(['pin', surface.section], pinned, { ...surface, noun: surface.prefix }, file);
  }
  for (const [key, definition] of Object.entries(data.definitions.tools)) {
    verifyDefinition(key, definition, data, file);
  }
  for (const surface of PIN_SURFACES) {
    for (const [key, definition] of Object.entries(data.definitions[DEFINITIONS_OF[surface.section]]))
      verifySurfaceDefinition(surface, key, definition, data, file);
  }
  verifyInstructions(data, file);
}

interface FoldShape {
  readonly overflowKey: string;
  /** The key prefix, for messages. */
  readonly noun: string;
  /** The preimage label of the overflow entry: the file's profile for tools, the surface's label. */
  readonly label: string;
}

/** One pinned fold as the file holds it: the catalog digest, the per-item map, the overflow entry. */
interface PinnedFoldSection {
  readonly catalog: string;
  readonly items: Readonly<Record<string, string>>;
  readonly overflow?: string | undefined;
}

// The pin-file split of `definitions` each surface reads (see pinFileSchema).
const DEFINITIONS_OF: Readonly<Record<PinnedSurface, 'prompts' | 'templates'>> = {
  prompts: 'prompts',
  resourceTemplates: 'templates',
};

// `items` is the map itself: `tools` for the tools, `items` for the other surfaces.
function verifyFold(at: readonly string[], section: PinnedFoldSection, shape: FoldShape, file: string): void {
  const itemsField = [...at, at.length === 1 ? 'tools' : 'items'];
  const legacy = Object.hasOwn(section.items, shape.overflowKey);
  if (legacy) verifyFoldShape(section.items, itemsField, shape, file);
  const folded = foldPinnedItems(section.items, { profile: shape.label, overflowKey: shape.overflowKey });
  if (section.catalog !== folded.catalog) {
    const field = formatFieldPath([...at, 'catalog']);
    const expected = `the fold of ${formatFieldPath(itemsField)}, ${folded.catalog}`;
    throw invalidField('GW_PIN_FILE_INVALID', file, field, expected, {
      data: { actual: section.catalog },
      note: `(got ${section.catalog})`,
    });
  }
  if (section.overflow !== folded.overflow) {
    const field = formatFieldPath([...at, 'overflow']);
    const expected = legacy
      ? `no overflow beside "${shape.overflowKey}" in ${formatFieldPath(itemsField)}`
      : folded.overflow === undefined
        ? `no overflow: ${formatFieldPath(itemsField)} has at most ${MAX_CATALOG_ENTRIES} keys`
        : `the fold's "${shape.overflowKey}" entry over the keys beyond the first ${MAX_CATALOG_ENTRIES}, ${folded.overflow}`;
    throw invalidField('GW_PIN_FILE_INVALID', file, field, expected, {
      note: `(got ${section.overflow ?? 'none'})`,
    });
  }
}

function verifyFoldShape(
  items: Readonly<Record<string, string>>,
  at: readonly string[],
  shape: FoldShape,
  file: string,
): void {
  const count = Object.keys(items).length;
  if (count !== MAX_CATALOG_ENTRIES + 1) {
    const field = formatFieldPath([...at, shape.overflowKey]);
    const expected = `only beside exactly ${MAX_CATALOG_ENTRIES} "${shape.noun}" keys (the fold keeps 500, then overflows)`;
    throw invalidField('GW_PIN_FILE_INVALID', file, field, expected, { note: `(got ${count - 1})` });
  }
}

function verifySurfaceDefinition(
  surface: PinSurface,
  key: string,
  definition: Readonly<Record<string, unknown>>,
  data: PinFileData,
  file: string,
): void {
  const field = formatFieldPath(['definitions', key]);
  const name = definition[surface.nameMember];
  if (surface.encodeKey(name) !== key) {
    const expected = `a definition whose ${surface.nameMember} has the key ${JSON.stringify(key)}`;
    throw invalidField('GW_PIN_FILE_INVALID', file, `${field}.${surface.nameMember}`, expected, {
      note: `(the key of ${JSON.stringify(name)} is ${surface.encodeKey(name)})`,
    });
  }
  const items = data.pin[surface.section]?.items ?? {};
  const pinned = Object.hasOwn(items, key) ? items[key] : undefined;
  if (pinned === undefined) {
    const section = formatFieldPath(['pin', surface.section, 'items']);
    throw invalidField('GW_PIN_FILE_INVALID', file, field, `a key that is also in ${section}`);
  }
  verifyDigest(field, pinned, () => surface.digest(definition), surface.label, file);
}

function verifyInstructions(data: PinFileData, file: string): void {
  if (data.instructions === undefined) return;
  if (data.pin.instructions === undefined)
    throw invalidField('GW_PIN_FILE_INVALID', file, 'instructions', 'a text only beside pin.instructions');
  verifyDigest(
    'instructions',
    data.pin.instructions,
    () => digestInstructions(data.instructions),
    INSTRUCTIONS_PROFILE,
    file,
  );
}

// A definition without a digest (a YAML .nan, say) or with another digest than the pinned one.
function verifyDigest(
  field: string,
  pinned: string,
  digest: () => string,
  label: string,
  file: string,
): void {
  let actual: string;
  try {
    actual = digest();
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw invalidField(
      'GW_PIN_FILE_INVALID',
      file,
      field,
      'a definition that has a digest (JSON values only)',
      {
        note: `(${reason})`,
        cause,
      },
    );
  }
  if (actual !== pinned) {
    throw invalidField(
      'GW_PIN_FILE_INVALID',
      file,
      field,
      `a definition whose digest is the pinned ${pinned}`,
      {
        data: { actual },
        note: `(it hashes to ${actual} under ${label})`,
      },
    );
  }
}

function verifyDefinition(
  key: string,
  definition: PinFileData['definitions']['tools'][string],
  data: PinFileData,
  file: string,
): void {
  const field = formatFieldPath(['definitions', key]);
  if (encodeToolKey(definition.name) !== key) {
    const expected = `a definition whose name has the fold key ${JSON.stringify(key)}`;
    throw invalidField('GW_PIN_FILE_INVALID', file, `${field}.name`, expected, {
      note: `(the key of ${JSON.stringify(definition.name)} is ${encodeToolKey(definition.name)})`,
    });
  }
  const pinned = data.pin.tools[key];
  if (pinned === undefined || !Object.hasOwn(data.pin.tools, key)) {
    throw invalidField('GW_PIN_FILE_INVALID', file, field, `a key that is also in pin.tools`);
  }
  verifyDigest(field, pinned, () => digestTool(definition, { profile: data.profile }), data.profile, file);
  verifyExtraMembers(key, definition, file);
}

// A member pinned by value is compared by its RFC 8785 form: one without (a YAML .nan, say) could
// never match what a server serves, so the file is refused rather than the tool blocked forever.
function verifyExtraMembers(key: string, definition: Readonly<Record<string, unknown>>, file: string): void {
  for (const [member, value] of Object.entries(extraMembersOf(definition) ?? {})) {
    try {
      canonicalizeJson(value);
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      const field = formatFieldPath(['definitions', key, member]);
      throw invalidField('GW_PIN_FILE_INVALID', file, field, 'a JSON value (pinned by value)', {
        note: `(${reason})`,
        cause,
      });
    }
  }
}
