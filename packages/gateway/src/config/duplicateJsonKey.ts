const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The index of the quote that closes the JSON string opened at `open`. */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  for (;;) {
    if (at < 0) return text.length;
    let escapes = 0;
    while (text.charCodeAt(at - 1 - escapes) === BACKSLASH) escapes += 1;
    if (escapes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
}

/**
 * The first member name that appears twice in one object of `text`, decoded (`"a"` and `"\u0061"`
 * are the same name), or undefined. `text` must be JSON that `JSON.parse` accepted: this is one
 * linear pass over its tokens, where the YAML reader's duplicate check compares each key with every
 * key before it in its mapping (seconds for a pin of 5,000 tools). Client configs, which may hold
 * comments, have their own check (cli/clientConfigText.ts `duplicateMember`).
 */
export function duplicateJsonKey(text: string): string | undefined {
  // One entry per open container: the names seen so far in an object, undefined for an array.
  const open: (Set<string> | undefined)[] = [];
  let keyNext = false;
  for (let at = 0; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = closingQuote(text, at);
      const names = open.at(-1);
      if (keyNext && names !== undefined) {
        const raw = text.slice(at + 1, end);
        const name = raw.includes('\\') ? (JSON.parse(text.slice(at, end + 1)) as string) : raw;
        if (names.has(name)) return name;
        names.add(name);
      }
      keyNext = false;
      at = end;
    } else if (code === OPEN_OBJECT) {
      open.push(new Set());
      keyNext = true;
    } else if (code === OPEN_ARRAY) {
      open.push(undefined);
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      open.pop();
    } else if (code === COMMA) {
      keyNext = open.at(-1) !== undefined;
    } else if (code === COLON) {
      keyNext = false;
    }
  }
  return undefined;
}
