import { RE2JS } from 're2js';

/** What Ajv calls on a compiled pattern (its `RegExpLike`). */
interface RegExpLike {
  test(text: string): boolean;
}

/** Ajv's `RegExpEngine`: compiles a pattern; `code` names it in standalone code (unused here). */
type RegExpEngine = ((pattern: string, flags: string) => RegExpLike) & { readonly code: string };

const HEX = /^[0-9a-fA-F]{4}$/;

function codeUnitAt(pattern: string, at: number): number | undefined {
  const hex = pattern.slice(at + 2, at + 6);
  return pattern[at] === '\\' && pattern[at + 1] === 'u' && HEX.test(hex) ? parseInt(hex, 16) : undefined;
}

/**
 * An ECMAScript pattern's `\uXXXX` and `\u{X…}` escapes in RE2's spelling, `\x{X…}` (a surrogate
 * pair written as two escapes is one code point, as under ECMAScript's `u` flag). Everything else
 * is left as written: RE2 reads it the same way or refuses it.
 */
export function re2Spelling(pattern: string): string {
  let out = '';
  for (let at = 0; at < pattern.length; at++) {
    const char = pattern[at] as string;
    if (char !== '\\' || pattern[at + 1] !== 'u') {
      // An escape is copied whole, so `\\u` stays a backslash followed by `u`.
      out += char === '\\' ? pattern.slice(at, at + 2) : char;
      if (char === '\\') at++;
      continue;
    }
    const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(pattern.slice(at + 2));
    if (braced !== null) {
      out += `\\x{${braced[1] as string}}`;
      at += 1 + braced[0].length;
      continue;
    }
    const unit = codeUnitAt(pattern, at);
    if (unit === undefined) {
      out += '\\u';
      at++;
      continue;
    }
    const low = unit >= 0xd800 && unit <= 0xdbff ? codeUnitAt(pattern, at + 6) : undefined;
    if (low !== undefined && low >= 0xdc00 && low <= 0xdfff) {
      out += `\\x{${(((unit - 0xd800) << 10) + (low - 0xdc00) + 0x10000).toString(16)}}`;
      at += 11;
    } else {
      out += `\\x{${unit.toString(16)}}`;
      at += 5;
    }
  }
  return out;
}

/**
 * Ajv's `code.regExp`: every pinned `pattern` and `patternProperties` key runs on RE2JS, a
 * linear-time engine (no backtracking), so no pattern a server pins can make one check take
 * seconds. A pattern RE2 cannot run (a backreference, a lookahead or lookbehind, `\p{Letter}`'s long
 * names…) throws at compile: the schema is uncompilable and its calls unverifiable (fail closed).
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string): RegExpLike => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(re2Spelling(pattern));
    } catch (error) {
      const shown = pattern.length <= 100 ? pattern : `${pattern.slice(0, 100)}…`;
      throw new Error(
        `the pattern ${JSON.stringify(shown)} cannot run on a linear-time engine (RE2 syntax: no backreferences or lookaround): ${(error as Error).message}`,
      );
    }
    // Ajv shares compiled patterns by this string (per validator instance): it must name the pattern.
    const like: RegExpLike = { test: (text: string) => compiled.test(text) };
    like.toString = () => `re2js:${pattern}`;
    return like;
  },
  { code: 'toolpin.linearRegExp' },
);
