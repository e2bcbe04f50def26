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

// ECMAScript's `\s` (WhiteSpace and LineTerminator), its complement, and what `.` matches (anything
// but a line terminator), in RE2's spelling: RE2's own `\s`, `\S` and `.` are ASCII-based and match
// `\r`, U+2028, U+00A0 where ECMAScript's do not, so a one-line or one-word pattern would let them by.
const ES_SPACE =
  '\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}';
const ES_NON_SPACE =
  '\\x{0}-\\x{8}\\x{e}-\\x{1f}\\x{21}-\\x{9f}\\x{a1}-\\x{167f}\\x{1681}-\\x{1fff}\\x{200b}-\\x{2027}' +
  '\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}\\x{3001}-\\x{fefe}\\x{ff00}-\\x{10ffff}';
const ES_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';
const ANYTHING = '[\\x{0}-\\x{10ffff}]';
const NOTHING = '[^\\x{0}-\\x{10ffff}]';

/** The RE2 spelling of the escape at `at` (`\\` then one character), read in or out of a class. */
function escapeSpelling(pattern: string, at: number, inClass: boolean): { text: string; length: number } {
  const next = pattern[at + 1];
  if (next === 's') return { text: inClass ? ES_SPACE : `[${ES_SPACE}]`, length: 2 };
  if (next === 'S') return { text: inClass ? ES_NON_SPACE : `[${ES_NON_SPACE}]`, length: 2 };
  if (next !== 'u') return { text: pattern.slice(at, at + 2), length: 2 };
  const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(pattern.slice(at + 2));
  if (braced !== null) return { text: `\\x{${braced[1] as string}}`, length: 2 + braced[0].length };
  const unit = codeUnitAt(pattern, at);
  if (unit === undefined) return { text: '\\u', length: 2 };
  const low = unit >= 0xd800 && unit <= 0xdbff ? codeUnitAt(pattern, at + 6) : undefined;
  if (low !== undefined && low >= 0xdc00 && low <= 0xdfff)
    return { text: `\\x{${(((unit - 0xd800) << 10) + (low - 0xdc00) + 0x10000).toString(16)}}`, length: 12 };
  return { text: `\\x{${unit.toString(16)}}`, length: 6 };
}

/**
 * An ECMAScript pattern in RE2's spelling, meaning what ECMAScript (the `u` flag, as Ajv compiles
 * patterns) means by it: `\uXXXX` and `\u{X…}` escapes as `\x{X…}` (a surrogate pair written as two
 * escapes is one code point), `\s`, `\S` and `.` as ECMAScript's classes, and a `[` inside a class
 * as the literal it is there (RE2 would read `[[:alpha:]` as a POSIX class). Everything else is
 * left as written: RE2 reads it the same way or refuses it.
 */
export function re2Spelling(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let at = 0; at < pattern.length;) {
    const char = pattern[at] as string;
    if (char === '\\') {
      const { text, length } = escapeSpelling(pattern, at, inClass);
      out += text;
      at += length;
      continue;
    }
    if (inClass) {
      out += char === '[' ? '\\[' : char;
      if (char === ']') inClass = false;
    } else if (char === '[') {
      // ECMAScript's `[]` matches nothing and `[^]` anything, where RE2 reads a `]` there as a member.
      const empty = /^\[\^?\]/.exec(pattern.slice(at))?.[0];
      if (empty !== undefined) {
        out += empty.length === 2 ? NOTHING : ANYTHING;
        at += empty.length;
        continue;
      }
      inClass = true;
      out += char;
      if (pattern[at + 1] === '^') out += pattern[++at] as string;
    } else out += char === '.' ? ES_DOT : char;
    at++;
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
  (pattern: string, flags: string): RegExpLike => {
    const shown = JSON.stringify(pattern.length <= 100 ? pattern : `${pattern.slice(0, 100)}…`);
    // The pattern must be one ECMAScript reads (JSON Schema's dialect, with Ajv's `u` flag): RE2 also
    // takes syntax of its own (`(?i)`, `\\Q…\\E`, `\\pL`, `a{,3}`) that ECMAScript refuses. Parsing it
    // is linear; the ECMAScript pattern is never run.
    const ecmaScript = ecmaScriptProblem(pattern, flags);
    if (ecmaScript !== undefined)
      throw new Error(`the pattern ${shown} is not an ECMAScript pattern: ${ecmaScript}`);
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(re2Spelling(pattern));
    } catch (error) {
      throw new Error(
        `the pattern ${shown} cannot run on a linear-time engine (RE2 syntax: no backreferences or lookaround): ${(error as Error).message}`,
      );
    }
    // Ajv shares compiled patterns by this string (per validator instance): it must name the pattern.
    const like: RegExpLike = { test: (text: string) => compiled.test(text) };
    like.toString = () => `re2js:${pattern}`;
    return like;
  },
  { code: 'toolpin.linearRegExp' },
);

/** Why ECMAScript refuses this pattern (its SyntaxError), or undefined when it parses. */
function ecmaScriptProblem(pattern: string, flags: string): string | undefined {
  try {
    new RegExp(pattern, flags);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
