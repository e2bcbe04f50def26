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

// The writes queued per pin file: two principals trusted on first use at once each read the file,
// added their entry and wrote it back, the later write dropping the earlier entry.
const queues = new Map<string, Promise<unknown>>();

/**
 * Records `catalog` as the entry of `principal` in the pin file's `principals` (docs/scopes.md):
 * the rest of the file is kept (a YAML file's comments and order too), the result is parsed as a
 * pin file before it replaces the file (atomically). `replace: false` keeps an entry already
 * there (a first use never overwrites a reviewed catalog); resolves with whether it wrote. Writes
 * to one file run one after another, each from the file as the one before left it; a file another
 * process changed between the read and the write is read again (never written back as it was).
 */
export function recordPrincipalPin(
  file: string,
  principal: string,
  catalog: PinnedCatalog,
  options: { readonly replace: boolean },
): Promise<boolean> {
  const previous = queues.get(file) ?? Promise.resolve();
  const run = previous.then(
    () => writeEntry(file, principal, catalog, options),
    () => writeEntry(file, principal, catalog, options),
  );
  const tail = run.catch(() => undefined);
  queues.set(file, tail);
  void tail.then(() => {
    if (queues.get(file) === tail) queues.delete(file);
  });
  return run;
}

const MAX_ATTEMPTS = 3;

async function writeEntry(
  file: string,
  principal: string,
  catalog: PinnedCatalog,
  options: { readonly replace: boolean },
): Promise<boolean> {
  for (let attempt = 1; ; attempt += 1) {
    const text = await readFile(file, 'utf8');
    const out = withEntry(text, file, principal, entryOf(catalog), options);
    if (out === undefined) return false;
    parsePinFile(out, file);
    if (attempt < MAX_ATTEMPTS && (await readFile(file, 'utf8')) !== text) continue;
    await writeFileAtomic(file, out);
    return true;
  }
}

/** The pin file's text with `entry` as `principal`'s, or undefined when one is there and is kept. */
function withEntry(
  text: string,
  file: string,
  principal: string,
  entry: Record<string, unknown>,
  options: { readonly replace: boolean },
): string | undefined {
  if (file.endsWith('.json')) {
    const document = JSON.parse(text) as { principals?: Record<string, unknown> };
    // Own members only: a principal named `constructor` has no entry in `{}`.
    const principals = document.principals ?? {};
    if (!options.replace && Object.hasOwn(principals, principal)) return undefined;
    document.principals = { ...document.principals, [principal]: entry };
    return `${JSON.stringify(document, null, 2)}\n`;
  }
  const document = parseDocument(text);
  if (!options.replace && document.hasIn(['principals', principal])) return undefined;
  document.setIn(['principals', principal], document.createNode(entry));
  return document.toString();
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
