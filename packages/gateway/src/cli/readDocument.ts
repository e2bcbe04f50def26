import { readFileSync } from 'node:fs';
import { parseYamlText } from '../config/readDocument.js';
import { CliInputError } from './cliInputError.js';

/**
 * Reads a JSON or YAML file. JSON is tried first so that catalogs are read by the exact JSON
 * grammar the digest is defined over; YAML (a superset for pin files) only when that fails, by the
 * same strict rule as the config files (config/readDocument.ts: unique keys, one document).
 */
export function readDocument(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliInputError(`${path}: cannot read the file: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (jsonError) {
    if (/\.json$/i.test(path)) {
      throw new CliInputError(`${path}: not valid JSON: ${(jsonError as Error).message}`, {
        cause: jsonError,
      });
    }
    // YAML by the config files' one strict rule: a catalog that could be read two ways is refused.
    const parsed = parseYamlText(text);
    if (parsed.ok) return parsed.value;
    const at = parsed.line === undefined ? '' : ` at line ${parsed.line}, column ${parsed.column ?? 1}`;
    throw new CliInputError(`${path}: neither JSON nor YAML: ${parsed.message}${at}`, {
      cause: parsed.cause,
    });
  }
}
