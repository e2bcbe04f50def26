import { encodeFoldKey } from './foldKey.js';

/**
 * The fold key of a tool name (spec section 4): `tool:` + the name with every character outside
 * 0x21-0x7E, `%` and `=` percent-encoded as UTF-8; a body over 128 characters is cut to 96 plus
 * `~` and 16 hex of SHA-256 of the name. A non-string or empty name is `tool:unnamed`.
 */
export function encodeToolKey(name: unknown): string {
  return encodeFoldKey('tool', name);
}
