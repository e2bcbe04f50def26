import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { parsePinFile } from './pinFile.js';
import type { PinnedCatalog, ServerConfig } from './types.js';
import { writeFileAtomic } from './writeFileAtomic.js';

/** A catalog as a pin file's `principals` entry holds it: the pin, each definition whole, the instructions text. */
function entryOf(catalog: PinnedCatalog): Record<string, unknown> {
  const definitions: Record<string, unknown> = {};
  for (const [key, definition] of Object.entries(catalog.definitions))
    definitions[key] = { ...definition, ...catalog.extraMembers[key] };
  Object.assign(definitions, catalog.promptDefinitions, catalog.templateDefinitions);
  return {
    pin: catalog.pin,
    definitions,
    ...(catalog.instructions === undefined ? {} : { instructions: catalog.instructions }),
  };
}

/**
 * Records `catalog` as the entry of `principal` in the pin file's `principals` (docs/scopes.md):
 * the rest of the file is kept (a YAML file's comments and order too), the result is parsed as a
 * pin file before it replaces the file (atomically). `replace: false` keeps an entry already
 * there (a first use never overwrites a reviewed catalog); resolves with whether it wrote.
 */
export async function recordPrincipalPin(
  file: string,
  principal: string,
  catalog: PinnedCatalog,
  options: { readonly replace: boolean },
): Promise<boolean> {
  const text = await readFile(file, 'utf8');
  const entry = entryOf(catalog);
  let out: string;
  if (file.endsWith('.json')) {
    const document = JSON.parse(text) as { principals?: Record<string, unknown> };
    if (!options.replace && document.principals?.[principal] !== undefined) return false;
    document.principals = { ...document.principals, [principal]: entry };
    out = `${JSON.stringify(document, null, 2)}\n`;
  } else {
    const document = parseDocument(text);
    if (!options.replace && document.hasIn(['principals', principal])) return false;
    document.setIn(['principals', principal], document.createNode(entry));
    out = document.toString();
  }
  parsePinFile(out, file);
  await writeFileAtomic(file, out);
  return true;
}

/** The catalog parts of a config (a first-use pin trusted for a principal, recorded as its entry). */
export function pinnedCatalogOf(config: ServerConfig): PinnedCatalog {
  const { pin, definitions, promptDefinitions, templateDefinitions, instructions, extraMembers } = config;
  return {
    pin,
    definitions,
    promptDefinitions,
    templateDefinitions,
    ...(instructions === undefined ? {} : { instructions }),
    extraMembers,
  };
}
