import { sha256Hex } from './sha256.js';

// Printable ASCII 0x21-0x7E except % (0x25) and = (0x3D): the characters kept literal
// (spec section 4, rule 2). One native test lets the usual plain name skip the encoder.
const ALL_LITERAL = /^[\x21-\x24\x26-\x3c\x3e-\x7e]*$/;
const MAX_BODY = 128;
const CUT_BODY = 96;
const HEX = '0123456789ABCDEF';
const utf8 = new TextEncoder();

function isLiteral(byte: number): boolean {
  return byte >= 0x21 && byte <= 0x7e && byte !== 0x25 && byte !== 0x3d;
}

function percentEncode(name: string): string {
  let out = '';
  // Every byte of a multi-byte UTF-8 sequence is >= 0x80, so encoding byte by byte is the
  // same as encoding character by character.
  for (const byte of utf8.encode(name)) {
    out += isLiteral(byte) ? String.fromCharCode(byte) : '%' + HEX[byte >> 4] + HEX[byte & 15];
  }
  return out;
}

/**
 * The fold key of a name under a prefix (spec section 4, written for `tool:` and applied as is to
 * `prompt:` and `template:`): `<prefix>:` + the name with every character outside 0x21-0x7E, `%`
 * and `=` percent-encoded as UTF-8; a body over 128 characters is cut to 96 plus `~` and 16 hex of
 * SHA-256 of the name. A non-string or empty name is `<prefix>:unnamed`.
 */
export function encodeFoldKey(prefix: string, name: unknown): string {
  if (typeof name !== 'string' || name === '') return prefix + ':unnamed';
  const body = ALL_LITERAL.test(name) ? name : percentEncode(name);
  if (body.length <= MAX_BODY) return prefix + ':' + body;
  // The cut counts encoded characters and may split a %XX triplet; that is as specified.
  return prefix + ':' + body.slice(0, CUT_BODY) + '~' + sha256Hex(name).slice(0, 16);
}
