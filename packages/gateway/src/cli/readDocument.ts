import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { CliInputError } from './cliInputError.js';

/**
 * Reads a JSON or YAML file. JSON is tried first so that catalogs are read by the exact JSON
 * grammar the digest is defined over; YAML (a superset for pin files) only when that fails.
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
    try {
      return parseYaml(text);
    } catch (yamlError) {
      throw new CliInputError(`${path}: neither JSON nor YAML: ${(yamlError as Error).message}`, {
        cause: yamlError,
      });
    }
  }
}
