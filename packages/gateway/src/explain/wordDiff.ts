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

function showRun(words: readonly string[], maxChars: number): string {
  const text = words.map(showWord).join(' ');
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}…(+${text.length - maxChars} chars)`;
}

function showSame(words: readonly string[], first: boolean, last: boolean, context: number): string[] {
  if (first && last) return words.map(showWord);
  if (first)
    return words.length > context ? ['…', ...words.slice(-context).map(showWord)] : words.map(showWord);
  if (last)
    return words.length > context ? [...words.slice(0, context).map(showWord), '…'] : words.map(showWord);
  if (words.length <= 2 * context) return words.map(showWord);
  return [...words.slice(0, context).map(showWord), '…', ...words.slice(-context).map(showWord)];
}

/**
 * A short word-level diff of two texts: unchanged words around each change, deletions as
 * `[-old words-]`, insertions as `[+new words+]`, long unchanged runs elided with `…`. Words are
 * compared after splitting on whitespace; a change of whitespace alone is reported as such, and
 * invisible characters are shown escaped (`\u{200b}`).
 */
export function diffWords(before: string, after: string, options: WordDiffOptions = {}): string {
  const context = options.context ?? 3;
  const maxRunChars = options.maxRunChars ?? 400;
  const ops = diffWordLists(splitWords(before), splitWords(after));
  if (ops.every((op) => op.kind === 'same')) return before === after ? '' : '[whitespace changed]';
  const parts: string[] = [];
  ops.forEach((op, index) => {
    if (op.kind === 'same') parts.push(...showSame(op.words, index === 0, index === ops.length - 1, context));
    else if (op.kind === 'del') parts.push(`[-${showRun(op.words, maxRunChars)}-]`);
    else parts.push(`[+${showRun(op.words, maxRunChars)}+]`);
  });
  return parts.join(' ');
}
