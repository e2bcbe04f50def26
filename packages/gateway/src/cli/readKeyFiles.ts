import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { readTrustedKey, type TrustedKey } from '../config/pinSignature.js';
import { CliInputError } from './cliInputError.js';

/**
 * Reads the public key files given to `flag` (`verify --key`, `pin --trust-key`): each an Ed25519
 * JWK (`toolpin key --new`) or PEM. Throws CliInputError when none is given or one cannot be read.
 */
export async function readKeyFiles(files: readonly string[], flag: string): Promise<TrustedKey[]> {
  if (files.length === 0) throw new CliInputError(`give at least one ${flag} <public key> to verify against`);
  const keys: TrustedKey[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new CliInputError(
        `${flag} ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    try {
      keys.push(readTrustedKey(text, resolve(file)));
    } catch (error) {
      throw new CliInputError(`${flag} ${(error as Error).message}`);
    }
  }
  return keys;
}
