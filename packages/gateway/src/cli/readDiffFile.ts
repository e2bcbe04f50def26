import type { ServerConfig } from '../config/index.js';
import { isObject } from '../wire/isObject.js';
import { CliInputError } from './cliInputError.js';
import { readDocument } from './readDocument.js';
import { readPinFileForCli } from './readPinFileForCli.js';

/** One file given to `toolpin diff`: its document, and its pin when it is a pin file. */
export interface DiffFile {
  readonly path: string;
  readonly document: unknown;
  /** Set for a pin file (a top-level `pin`), loaded and verified as `check` and the gateway load it. */
  readonly server?: ServerConfig;
}

/**
 * Reads one side of `toolpin diff`. A pin file goes through the one verifying loader
 * (readPinFileForCli: the schema, every fold, every definition's digest, the instructions text
 * against `pin.instructions`), so diff refuses exactly what `check` refuses. Throws CliInputError.
 */
export async function readDiffFile(path: string): Promise<DiffFile> {
  const document = readDocument(path);
  if (!isObject(document) || document.pin === undefined) return { path, document };
  const { server } = await readPinFileForCli(path);
  if (server.trustOnFirstUse === true)
    throw new CliInputError(`${path}: the pin file says trust-on-first-use: nothing is pinned yet`);
  return { path, document, server };
}
