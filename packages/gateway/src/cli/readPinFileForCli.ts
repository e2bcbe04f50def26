import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parsePinFile, type ServerConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import { CliInputError } from './cliInputError.js';

/** Reads and validates a pin file as the gateway would. Throws CliInputError naming file and field. */
export async function readPinFileForCli(
  path: string,
): Promise<{ file: string; text: string; server: ServerConfig }> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliInputError(`${file}: cannot read the file: ${(error as Error).message}`, { cause: error });
  }
  try {
    return { file, text, server: parsePinFile(text, file) };
  } catch (error) {
    if (error instanceof GatewayError) throw new CliInputError(error.message, { cause: error });
    throw error;
  }
}
