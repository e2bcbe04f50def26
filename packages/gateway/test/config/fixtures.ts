import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestCatalog } from '@toolpin/digest';

/** A small catalog of two tools, as a server would list it. */
export const TOOLS = [
  {
    name: 'echo',
    description: 'Echoes its input.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'add',
    title: 'Add',
    description: 'Adds two numbers.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } } },
  },
];

const digested = digestCatalog(TOOLS);

/** The catalog digest of {@link TOOLS}. */
export const CATALOG = digested.catalog;

/** Folded key -> digest of {@link TOOLS}. */
export const TOOL_DIGESTS: Record<string, string> = digested.entries;

/** A valid pin file as plain data, with definitions; callers clone and break it. */
export function validPin(): Record<string, unknown> {
  return {
    name: 'demo',
    upstream: { url: 'http://127.0.0.1:3001/mcp', headers: { 'X-Api-Key': 'secret' } },
    mode: 'enforce',
    pin: { catalog: CATALOG, tools: { ...TOOL_DIGESTS } },
    definitions: { 'tool:echo': structuredClone(TOOLS[0]), 'tool:add': structuredClone(TOOLS[1]) },
  };
}

/** A fresh temporary folder under os.tmpdir(), and a function that removes it. */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'toolpin-config-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes `text` to `dir/name` and returns the path. */
export async function writeIn(dir: string, name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text, 'utf8');
  return file;
}
