import { escapeInvisible } from './escapeInvisible.js';

/** Options of {@link diffWords}. */
export interface WordDiffOptions {
  /**
   * Unchanged words kept on each side of a change; longer unchanged runs are elided with `…`.
   * @default 3
   */
  readonly context?: number;
  /**
   * Characters of one inserted or deleted run shown before it is cut with `…(+N chars)`.
   * @default 400
   */
  readonly maxRunChars?: number;
}

type Op = { readonly kind: 'same' | 'del' | 'ins'; readonly words: string[] };

// Past this many cells the middle is shown as one replacement: a description of thousands of
// words must not cost seconds of CPU inside the gateway's response path.
const MAX_LCS_CELLS = 250_000;

function splitWords(text: string): string[] {
  return text.split(/\s+/u).filter((word) => word !== '');
}

function showWord(word: string): string {
  return escapeInvisible(word);
}

function pushOp(ops: Op[], kind: Op['kind'], word: string): void {
  const last = ops[ops.length - 1];
  if (last !== undefined && last.kind === kind) last.words.push(word);
  else ops.push({ kind, words: [word] });
}

/** The edit script between two word lists: longest common subsequence on the part between the common prefix and suffix. */
function diffWordLists(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops: Op[] = [];
  for (const word of a.slice(0, start)) pushOp(ops, 'same', word);
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  if (midA.length * midB.length > MAX_LCS_CELLS) {
    for (const word of midA) pushOp(ops, 'del', word);
    for (const word of midB) pushOp(ops, 'ins', word);
  } else {
    for (const op of lcsOps(midA, midB)) for (const word of op.words) pushOp(ops, op.kind, word);
  }
  for (const word of a.slice(endA)) pushOp(ops, 'same', word);
  return ops;
}

function lcsOps(a: readonly string[], b: readonly string[]): Op[] {
  const width = b.length + 1;
  // lengths[i * width + j] = LCS length of a[i..] and b[j..].
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? (lengths[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lengths[(i + 1) * width + j] ?? 0, lengths[i * width + j + 1] ?? 0);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      pushOp(ops, 'same', a[i++] as string);
      j++;
    } else if (
      i < a.length &&
      (j >= b.length || (lengths[(i + 1) * width + j] ?? 0) >= (lengths[i * width + j + 1] ?? 0))
    ) {
      // On a tie the deletion goes first, so a replacement reads [-old-] [+new+].
      pushOp(ops, 'del', a[i++] as string);
    } else {
      pushOp(ops, 'ins', b[j++] as string);
    }
  }
  return ops;
}

/**
 * One run of a word diff, as shown: words joined by one space, invisible characters escaped
 * (`\u{200b}`). Renderers (the terminal's `[-…-]`/`[+…+]`, the review page's `<del>`/`<ins>`) work
 * from these operations, never from markers in text: server text is only ever a run's `text`.
 */
export type WordDiffOp =
  /** Unchanged, inserted or deleted words; `cut`: characters of the run left out past the limit. */
  | { readonly op: 'equal' | 'insert' | 'delete'; readonly text: string; readonly cut?: number }
  /** Unchanged words left out between the context kept around changes (shown `…`). */
  | { readonly op: 'elided' }
  /** The texts differ in whitespace only. */
  | { readonly op: 'whitespace' };

function showWords(words: readonly string[]): string {
  return words.map(showWord).join(' ');
}

function runOp(op: 'insert' | 'delete', words: readonly string[], maxChars: number): WordDiffOp {
  const text = showWords(words);
  if (text.length <= maxChars) return { op, text };
  return { op, text: text.slice(0, maxChars), cut: text.length - maxChars };
}

function sameOps(words: readonly string[], first: boolean, last: boolean, context: number): WordDiffOp[] {
  const equal = (part: readonly string[]): WordDiffOp[] =>
    part.length === 0 ? [] : [{ op: 'equal', text: showWords(part) }];
  const head = first ? 0 : context;
  const tail = last ? 0 : context;
  if ((first && last) || words.length <= head + tail) return equal(words);
  return [...equal(words.slice(0, head)), { op: 'elided' }, ...equal(words.slice(words.length - tail))];
}

/**
 * The operations of a short word-level diff of two texts: unchanged words around each change
 * (`context` on each side, the rest `elided`), deleted and inserted runs (cut past `maxRunChars`).
 * Words are compared after splitting on whitespace; a change of whitespace alone is one
 * `whitespace` operation, equal texts give none.
 */
export function diffWordOps(before: string, after: string, options: WordDiffOptions = {}): WordDiffOp[] {
  const context = options.context ?? 3;
  const maxRunChars = options.maxRunChars ?? 400;
  const ops = diffWordLists(splitWords(before), splitWords(after));
  if (ops.every((op) => op.kind === 'same')) return before === after ? [] : [{ op: 'whitespace' }];
  return ops.flatMap((op, index) => {
    if (op.kind === 'same') return sameOps(op.words, index === 0, index === ops.length - 1, context);
    return [runOp(op.kind === 'del' ? 'delete' : 'insert', op.words, maxRunChars)];
  });
}

// Server text can hold `[-`, `-]`, `[+` and `+]`: a `\` is put between the bracket and the sign
// (and after a run's last `[`, before its first `]`, which would meet the markers around it), so
// the markers of a printed diff are only ever toolpin's.
function escapeMarkers(text: string): string {
  return text
    .replace(/\[(?=[-+])/g, '[\\')
    .replace(/([-+])\]/g, '$1\\]')
    .replace(/\[$/, '[\\')
    .replace(/^\]/, '\\]');
}

function showOp(op: WordDiffOp): string {
  switch (op.op) {
    case 'elided':
      return '…';
    case 'whitespace':
      return '[whitespace changed]';
    case 'equal':
      return escapeMarkers(op.text);
    default: {
      const cut = op.cut === undefined ? '' : `…(+${op.cut} chars)`;
      const sign = op.op === 'insert' ? '+' : '-';
      return `[${sign}${escapeMarkers(op.text)}${cut}${sign}]`;
    }
  }
}

/**
 * A word diff's operations as one line of text: deletions as `[-old words-]`, insertions as
 * `[+new words+]`, left-out unchanged words as `…`. A marker inside server text is escaped
 * (`[\-`, `-\]`), so every `[-`, `-]`, `[+`, `+]` of the line is a marker.
 */
export function formatWordDiff(ops: readonly WordDiffOp[]): string {
  return ops.map(showOp).join(' ');
}

/**
 * A short word-level diff of two texts as one line (see {@link diffWordOps} and
 * {@link formatWordDiff}): unchanged words around each change, deletions as `[-old words-]`,
 * insertions as `[+new words+]`, long unchanged runs elided with `…`; a change of whitespace alone
 * is `[whitespace changed]`, equal texts give ''.
 */
export function diffWords(before: string, after: string, options: WordDiffOptions = {}): string {
  return formatWordDiff(diffWordOps(before, after, options));
}
