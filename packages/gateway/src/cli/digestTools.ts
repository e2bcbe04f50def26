import { DigestError, digestCatalog, type CatalogDigestResult } from '@toolpin/digest';
import { CliInputError } from './cliInputError.js';

/** digestCatalog, with a DigestError turned into bad input that names the file. */
export function digestTools(tools: unknown[], profile: string, path: string): CatalogDigestResult {
  try {
    return digestCatalog(tools, { profile });
  } catch (error) {
    if (error instanceof DigestError) throw new CliInputError(`${path}: ${error.message}`, { cause: error });
    throw error;
  }
}
