/**
 * Splits a command line into argv the way a POSIX shell would for plain words: whitespace
 * separates, '…' is literal, "…" honours \" and \\, a backslash escapes the next character
 * outside quotes. No expansion of any kind. Throws on an unterminated quote.
 */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) word += text[++i];
      else word += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quote !== undefined) throw new Error(`unterminated ${quote} quote in command line`);
  if (inWord) words.push(word);
  return words;
}
