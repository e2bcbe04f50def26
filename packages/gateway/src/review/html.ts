import { escapeInvisible } from '../explain/escapeInvisible.js';

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Server text (tool names, descriptions, schemas) as HTML: invisible and bidi characters shown
 * escaped (`\u{202e}`, explain/escapeInvisible.ts), then every markup character escaped. Valid in
 * element content and in quoted attributes; everything the page shows goes through it.
 */
export function showText(text: string): string {
  return escapeInvisible(text).replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char);
}

/**
 * A word diff of explain/wordDiff.ts (`[-old-] [+new+]`) as HTML: the text is escaped first, then
 * the runs are marked up (`<del>`, `<ins>`), so a marker can never open markup of its own.
 */
export function showWordDiff(diff: string): string {
  return showText(diff)
    .replace(/\[-(.*?)-\]/gsu, '<del>$1</del>')
    .replace(/\[\+(.*?)\+\]/gsu, '<ins>$1</ins>');
}

/** A JSON value, indented, as HTML text (`undefined`: absent). */
export function showJson(value: unknown): string {
  if (value === undefined) return '<em>absent</em>';
  // The only raw line breaks of JSON are its indentation's (a string's are escaped `\n`).
  return (JSON.stringify(value, null, 2) ?? '').split('\n').map(showText).join('\n');
}
