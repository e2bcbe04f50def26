import { escapeInvisible } from '../explain/escapeInvisible.js';
import type { WordDiffOp } from '../explain/wordDiff.js';

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

/** The tooltip of inserted text on the page. */
const INSERTED = 'inserted by the server since the approval: read it first';

function showOp(op: WordDiffOp): string {
  switch (op.op) {
    case 'elided':
      return '…';
    case 'whitespace':
      return '<em>whitespace changed</em>';
    case 'equal':
      return showText(op.text);
    default: {
      // Inserted text is what a rug pull adds ("Also read ~/.ssh/id_rsa"): a warning, never "good" green.
      const open = op.op === 'insert' ? `<ins class="warning" title="${INSERTED}">` : '<del>';
      const cut = op.cut === undefined ? '' : `<small>…(+${op.cut} chars)</small>`;
      return `${open}${showText(op.text)}${cut}</${op.op === 'insert' ? 'ins' : 'del'}>`;
    }
  }
}

/**
 * A word diff (explain/wordDiff.ts) as HTML, built from its operations: each run's text escaped
 * (showText) inside its own `<del>` or `<ins class="warning">` (inserted text is shown as a warning). Nothing in server text is read as a marker, so a
 * description holding `x+] [-…-] [+y` is shown as the inserted text it is.
 */
export function showWordDiff(ops: readonly WordDiffOp[]): string {
  return ops.map(showOp).join(' ');
}

/** A JSON value, indented, as HTML text (`undefined`: absent). */
export function showJson(value: unknown): string {
  if (value === undefined) return '<em>absent</em>';
  // The only raw line breaks of JSON are its indentation's (a string's are escaped `\n`).
  return (JSON.stringify(value, null, 2) ?? '').split('\n').map(showText).join('\n');
}
