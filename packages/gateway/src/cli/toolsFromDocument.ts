import { CliInputError } from './cliInputError.js';
import { isObject } from '../wire/isObject.js';

/**
 * The tools array of a parsed catalog document, which may be a bare array of tools, a tools/list
 * result `{"tools": [...]}`, or a whole JSON-RPC response `{"jsonrpc": "2.0", "result": {"tools": [...]}}`.
 */
export function toolsFromDocument(document: unknown, path: string): unknown[] {
  if (Array.isArray(document)) return document;
  if (isObject(document)) {
    if (Array.isArray(document.tools)) return document.tools;
    if (isObject(document.result) && Array.isArray(document.result.tools)) return document.result.tools;
    if (document.error !== undefined) {
      throw new CliInputError(`${path}: a JSON-RPC error response, not a tools/list result`);
    }
  }
  throw new CliInputError(
    `${path}: expected an array of tools, a tools/list result {"tools": [...]} or a JSON-RPC response with result.tools`,
  );
}
