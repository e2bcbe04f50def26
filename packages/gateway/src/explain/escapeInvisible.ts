// Control, format (zero-width, bidi overrides), private-use and unassigned code points, and the
// line/paragraph separators. Text from a server made of these looks unchanged (or rewrites the
// terminal, for ESC) when printed, which is exactly how poisoned definitions hide.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/gu;

/** Shows invisible and control characters of server-provided text escaped as `\u{200b}`, so what is printed is what was served. */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, (char) => `\\u{${(char.codePointAt(0) ?? 0).toString(16)}}`);
}
