import { DigestError } from './digestError.js';

// Anything JSON.stringify would escape (quote, backslash, controls) or that needs the lone
// surrogate check. Most strings in tool definitions have none of these, so one native regex
// scan lets them be quoted by plain concatenation, skipping the JSON.stringify call.
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes
const NEEDS_CARE = /["\\\x00-\x1f\uD800-\uDFFF]/;
const ANY_SURROGATE = /[\uD800-\uDFFF]/;

// Quoted member names with their colon. Tool schemas repeat a small vocabulary of names
// ("type", "description", "properties"...), so a lookup beats re-scanning and re-quoting each
// time. Bounded so that a stream of distinct names cannot grow it without limit.
const QUOTED_KEYS = new Map<string, string>();
const MAX_QUOTED_KEYS = 4096;

/** True when `text` holds a high surrogate not followed by a low one, or a low one not preceded by a high. */
function hasLoneSurrogate(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1); // NaN past the end, which fails the range test
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
      i++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return true;
    }
  }
  return false;
}

/**
 * How deep a value may nest (arrays and objects; a scalar is depth 0, `[]` is 1) to have a digest.
 * Real tool schemas nest a few dozen levels; the bound keeps the recursive writer far from the
 * stack limit whatever the input, and turns a cycle into an error instead of an overflow.
 */
export const MAX_CANONICAL_DEPTH = 256;

function tooDeep(): DigestError {
  const reason = `nested deeper than ${MAX_CANONICAL_DEPTH} levels (or circular)`;
  return new DigestError('DIGEST_TOO_DEEP', `value cannot be canonicalized: ${reason}`, { reason });
}

function notCanonical(reason: string): DigestError {
  return new DigestError('DIGEST_NOT_CANONICAL', `value cannot be canonicalized by RFC 8785: ${reason}`, {
    reason,
  });
}

/**
 * Serializes a string as a JSON string literal, RFC 8785 section 3.2.2.2.
 * JSON.stringify on a well-formed string emits exactly the JCS escapes (\b \f \n \r \t \" \\ and
 * lowercase \u00xx for other controls, everything else literal) and runs natively, far faster
 * than any per-character loop in JS.
 */
export function quoteJsonString(text: string): string {
  if (!NEEDS_CARE.test(text)) return '"' + text + '"';
  if (ANY_SURROGATE.test(text) && hasLoneSurrogate(text)) throw notCanonical('lone surrogate is not allowed');
  return JSON.stringify(text);
}

/** A member name quoted as a JSON string and followed by ":", from the cache when possible. */
function quoteKey(key: string): string {
  let quoted = QUOTED_KEYS.get(key);
  if (quoted === undefined) {
    quoted = quoteJsonString(key) + ':'; // throws before caching a lone surrogate
    if (QUOTED_KEYS.size < MAX_QUOTED_KEYS) QUOTED_KEYS.set(key, quoted);
  }
  return quoted;
}

/**
 * Serializes a finite number, RFC 8785 section 3.2.2.3. JCS specifies ECMAScript
 * Number::toString, which is what String() is; String(-0) is "0" as JCS requires.
 */
function formatNumber(value: number): string {
  if (value !== value) throw notCanonical('NaN is not allowed');
  if (value === Infinity || value === -Infinity) throw notCanonical('Infinity is not allowed');
  return String(value);
}

/**
 * The recursive writer. One function with a switch on typeof, no closures and no
 * map()/join() arrays: the result is built by += on one string per container, which V8
 * represents as a rope and flattens once, when the caller hashes it. `depth` is the depth a
 * container `value` has (1 at the top); beyond MAX_CANONICAL_DEPTH it throws DIGEST_TOO_DEEP.
 */
export function writeJson(value: unknown, depth = 1): string {
  switch (typeof value) {
    case 'string':
      return quoteJsonString(value);
    case 'number':
      return formatNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (depth > MAX_CANONICAL_DEPTH) throw tooDeep();
      return Array.isArray(value)
        ? writeArray(value, depth)
        : writeObject(value as Record<string, unknown>, depth);
    default:
      throw notCanonical(`a ${typeof value} is not a JSON value`);
  }
}

function writeArray(items: readonly unknown[], depth: number): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    // JSON.stringify would write null for undefined; hashing [undefined] as [null] would make two
    // different inputs collide, so a hole or undefined element has no digest.
    if (item === undefined) throw notCanonical('undefined is not a JSON value');
    if (i > 0) out += ',';
    out += writeJson(item, depth + 1);
  }
  return out + ']';
}

/**
 * Sorts member names in JCS order (RFC 8785 section 3.2.3): UTF-16 code units, which is what
 * both the < operator on strings and the default sort() compare. Schema objects have a handful
 * of members, where an inline insertion sort beats the call into the sort builtin; larger
 * objects use the builtin.
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
}

function writeObject(object: Record<string, unknown>, depth: number): string {
  // Parity with JSON.stringify and the canonicalize package: an object with toJSON (a Date)
  // is serialized as what toJSON returns, in this object's place.
  if (typeof object.toJSON === 'function') return writeJson((object.toJSON as () => unknown)(), depth);
  const keys = Object.keys(object);
  if (keys.length > 1) sortKeys(keys);
  let out = '{';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const member = object[key];
    // An undefined member is absent, as after a JSON round trip (and as in restrictTool).
    if (member === undefined) continue;
    if (first) first = false;
    else out += ',';
    out += quoteKey(key);
    out += writeJson(member, depth + 1);
  }
  return out + '}';
}

/**
 * Maps a stack overflow to the package error: a last resort, since the depth bound stops cycles
 * and absurd nesting first (a toJSON that recurses on its own could still overflow).
 */
export function asDigestError(error: unknown): unknown {
  return error instanceof RangeError ? notCanonical('structure is circular or nested too deeply') : error;
}

/**
 * Serializes a JSON value by RFC 8785 (JCS), byte-identical to the canonicalize package for
 * every JSON value. Throws DigestError DIGEST_NOT_CANONICAL for NaN, ±Infinity, lone
 * surrogates (in keys or strings), undefined array elements, functions, symbols and bigints,
 * and DIGEST_TOO_DEEP for a value nested deeper than MAX_CANONICAL_DEPTH (or circular).
 */
export function canonicalizeJson(value: unknown): string {
  try {
    return writeJson(value);
  } catch (error) {
    throw asDigestError(error);
  }
}
