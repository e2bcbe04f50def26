import { createHash } from 'node:crypto';
import { canonicalizeJson, digestTool, encodeToolKey } from '@toolpin/digest';
import { invalidField } from './configError.js';
import { extraMembersOf } from '../explain/extraMembers.js';
import { formatFieldPath } from './fieldPath.js';
import type { PinFileData } from './pinFileSchema.js';

// Spec section 5: at most 500 entries survive the fold, the rest hash into this one entry.
const MAX_CATALOG_ENTRIES = 500;
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
 * The checks that relate a pin file's members, which a schema cannot express: `pin.tools` is a map
 * some fold could produce, `pin.catalog` is its fold, and every definition hashes to its pinned
 * digest under the file's profile. Throws GW_PIN_FILE_INVALID naming the field.
 */
export function verifyPin(data: PinFileData, file: string): void {
  verifyFoldShape(data.pin.tools, file);
  const catalog = catalogOfFoldedTools(data.pin.tools);
  if (data.pin.catalog !== catalog) {
    throw invalidField('GW_PIN_FILE_INVALID', file, 'pin.catalog', `the fold of pin.tools, ${catalog}`, {
      data: { actual: data.pin.catalog },
      note: `(got ${data.pin.catalog})`,
    });
  }
  for (const [key, definition] of Object.entries(data.definitions)) {
    verifyDefinition(key, definition, data, file);
  }
}

function verifyFoldShape(tools: Readonly<Record<string, string>>, file: string): void {
  const count = Object.keys(tools).length;
  const hasOverflow = Object.hasOwn(tools, OVERFLOW_KEY);
  if (hasOverflow && count !== MAX_CATALOG_ENTRIES + 1) {
    const field = formatFieldPath(['pin', 'tools', OVERFLOW_KEY]);
    const expected = `only beside exactly ${MAX_CATALOG_ENTRIES} "tool:" keys (the fold keeps 500, then overflows)`;
    throw invalidField('GW_PIN_FILE_INVALID', file, field, expected, { note: `(got ${count - 1})` });
  }
  if (!hasOverflow && count > MAX_CATALOG_ENTRIES) {
    const expected = `at most ${MAX_CATALOG_ENTRIES} keys, the rest folded into "${OVERFLOW_KEY}"`;
    throw invalidField('GW_PIN_FILE_INVALID', file, 'pin.tools', expected, { note: `(got ${count})` });
  }
}

function verifyDefinition(
  key: string,
  definition: PinFileData['definitions'][string],
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
  let digest: string;
  try {
    digest = digestTool(definition, { profile: data.profile });
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
  if (digest !== pinned) {
    const expected = `a definition whose digest is the pinned ${pinned}`;
    throw invalidField('GW_PIN_FILE_INVALID', file, field, expected, {
      data: { actual: digest },
      note: `(it hashes to ${digest} under ${data.profile})`,
    });
  }
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
