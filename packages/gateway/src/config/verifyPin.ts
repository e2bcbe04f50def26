import { createHash } from 'node:crypto';
import {
  canonicalizeJson,
  digestInstructions,
  digestTool,
  encodeToolKey,
  INSTRUCTIONS_PROFILE,
  MAX_CATALOG_ENTRIES,
} from '@toolpin/digest';
import { PIN_SURFACES, type PinnedSurface, type PinSurface } from './pinSurfaces.js';
import { invalidField } from './configError.js';
import { extraMembersOf } from '../explain/extraMembers.js';
import { formatFieldPath } from './fieldPath.js';
import type { PinFileData } from './pinFileSchema.js';

// Spec section 5: at most 500 entries survive the fold, the rest hash into this one entry.
const OVERFLOW_KEY = 'tools:overflow';

/**
 * The catalog digest of an already folded map: `sha256:` + hex SHA-256 of the sorted `key=digest`
 * lines joined by "\n". This is the last step of foldCatalog; calling foldCatalog itself on a
 * folded map would fold a map with `tools:overflow` (501 entries) a second time.
 */
export function catalogOfFoldedTools(tools: Readonly<Record<string, string>>): string {
  const lines = Object.keys(tools)
    .sort()
    .map((key) => `${key}=${tools[key] as string}`);
  return 'sha256:' + createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex');
}

/**
 * The checks that relate a pin file's members, which a schema cannot express: `pin.tools` (and
 * `pin.prompts.items`, `pin.resourceTemplates.items`) is a map some fold could produce, each
 * catalog digest is its fold, every definition hashes to its pinned digest (tools under the file's
 * profile, the other surfaces under their own labels), and the instructions text hashes to
 * `pin.instructions`. Throws GW_PIN_FILE_INVALID naming the field.
 */
export function verifyPin(data: PinFileData, file: string): void {
  verifyFold(['pin'], data.pin.catalog, data.pin.tools, { overflowKey: OVERFLOW_KEY, noun: 'tool:' }, file);
  for (const surface of PIN_SURFACES) {
    const pinned = data.pin[surface.section];
    if (pinned !== undefined)
      verifyFold(
        ['pin', surface.section],
        pinned.catalog,
        pinned.items,
        { ...surface, noun: surface.prefix },
        file,
      );
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
}

// The pin-file split of `definitions` each surface reads (see pinFileSchema).
const DEFINITIONS_OF: Readonly<Record<PinnedSurface, 'prompts' | 'templates'>> = {
  prompts: 'prompts',
  resourceTemplates: 'templates',
};

// `items` is the map itself: `tools` for the tools, `items` for the other surfaces.
function verifyFold(
  at: readonly string[],
  catalog: string,
  items: Readonly<Record<string, string>>,
  shape: FoldShape,
  file: string,
): void {
  const itemsField = [...at, at.length === 1 ? 'tools' : 'items'];
  verifyFoldShape(items, itemsField, shape, file);
  const folded = catalogOfFoldedTools(items);
  if (catalog !== folded) {
    const field = formatFieldPath([...at, 'catalog']);
    throw invalidField(
      'GW_PIN_FILE_INVALID',
      file,
      field,
      `the fold of ${formatFieldPath(itemsField)}, ${folded}`,
      {
        data: { actual: catalog },
        note: `(got ${catalog})`,
      },
    );
  }
}

function verifyFoldShape(
  items: Readonly<Record<string, string>>,
  at: readonly string[],
  shape: FoldShape,
  file: string,
): void {
  const count = Object.keys(items).length;
  const hasOverflow = Object.hasOwn(items, shape.overflowKey);
  if (hasOverflow && count !== MAX_CATALOG_ENTRIES + 1) {
    const field = formatFieldPath([...at, shape.overflowKey]);
    const expected = `only beside exactly ${MAX_CATALOG_ENTRIES} "${shape.noun}" keys (the fold keeps 500, then overflows)`;
    throw invalidField('GW_PIN_FILE_INVALID', file, field, expected, { note: `(got ${count - 1})` });
  }
  if (!hasOverflow && count > MAX_CATALOG_ENTRIES) {
    const expected = `at most ${MAX_CATALOG_ENTRIES} keys, the rest folded into "${shape.overflowKey}"`;
    throw invalidField('GW_PIN_FILE_INVALID', file, formatFieldPath(at), expected, {
      note: `(got ${count})`,
    });
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
