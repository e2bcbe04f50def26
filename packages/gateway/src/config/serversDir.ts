import type { SignaturePolicy } from './pinSignature.js';
import { readdir, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { GatewayError } from '../errors.js';
import { unreadable } from './configError.js';
import { deepFreeze } from './deepFreeze.js';
import { loadPinFile } from './pinFile.js';
import type { ServerConfig } from './types.js';

/** File extensions read as pin files; every other file in the folder is ignored. */
export const PIN_FILE_EXTENSIONS: readonly string[] = ['.yaml', '.yml', '.json'];

/** The pin files of a folder, absolute and sorted: `*.yaml`, `*.yml`, `*.json` regular files, dotfiles skipped. */
export async function listPinFiles(dir: string): Promise<string[]> {
  const folder = resolve(dir);
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (cause) {
    throw unreadable('GW_CONFIG_INVALID', folder, 'a readable folder of pin files', cause);
  }
  const files: string[] = [];
  for (const name of names.sort()) {
    // Dotfiles are editor swap and backup files far more often than pins.
    if (name.startsWith('.') || !PIN_FILE_EXTENSIONS.includes(extname(name).toLowerCase())) continue;
    const file = join(folder, name);
    // A name that cannot be stat'ed (a broken link) is kept, so that loadPinFile reports it.
    const stats = await stat(file).catch(() => undefined);
    if (stats === undefined || stats.isFile()) files.push(file);
  }
  return files;
}

/**
 * Loads every pin file in `dir` (sorted by file name) and checks that server names are unique.
 * Rejects with GatewayError GW_PIN_FILE_INVALID, GW_PIN_DUPLICATE_NAME, or GW_CONFIG_INVALID
 * when the folder cannot be read.
 */
export async function loadServersDir(dir: string, signatures?: SignaturePolicy): Promise<ServerConfig[]> {
  const results = await Promise.allSettled(
    (await listPinFiles(dir)).map((file) => loadPinFile(file, signatures)),
  );
  const servers: ServerConfig[] = [];
  // The first failure in file-name order, so the same folder always reports the same error.
  for (const result of results) {
    if (result.status === 'rejected') throw result.reason;
    servers.push(result.value);
  }
  assertUniqueNames(servers);
  return servers;
}

/** Throws GW_PIN_DUPLICATE_NAME, naming both files, when two servers share a name (their route). */
function assertUniqueNames(servers: readonly ServerConfig[]): void {
  const seen = new Map<string, string>();
  for (const server of servers) {
    const first = seen.get(server.name);
    if (first !== undefined) {
      const message =
        `Duplicate server name ${JSON.stringify(server.name)} in pin files ${first} and ${server.file}: ` +
        'expected a name unique across pin files (it is the route /<name>/mcp)';
      throw new GatewayError(
        'GW_PIN_DUPLICATE_NAME',
        message,
        deepFreeze({
          file: server.file,
          field: 'name',
          expected: 'a name unique across pin files',
          files: [first, server.file],
        }),
      );
    }
    seen.set(server.name, server.file);
  }
}
