import { escapeInvisible } from './escapeInvisible.js';
import { textChanges, type TextChange } from './textChanges.js';

/** One side of the server's instructions: the digest, and the text when it is known (`null`: none sent). */
export interface InstructionsSide {
  readonly digest: string;
  /** The text; `null` when the side says the server sends none; undefined when only the digest is known. */
  readonly text?: string | null | undefined;
}

/** The pinned instructions compared with the observed ones. */
export interface InstructionsDrift {
  readonly equal: boolean;
  readonly pinned: string;
  readonly observed: string;
  /** Word diff of the text at `/instructions`, when both texts are known (none counts as ""). */
  readonly text: readonly TextChange[];
  /** Instructions reach the system prompt: any change is high. */
  readonly severity: 'high' | null;
}

/**
 * Compares pinned and observed instructions by digest and, when both texts are known, explains the
 * change as a word diff at `/instructions` (the same layout as a definition's texts).
 */
export function explainInstructions(pinned: InstructionsSide, observed: InstructionsSide): InstructionsDrift {
  const equal = pinned.digest === observed.digest;
  const known = pinned.text !== undefined && observed.text !== undefined;
  const text =
    equal || !known
      ? []
      : textChanges(
          { instructions: pinned.text ?? undefined },
          { instructions: observed.text ?? undefined },
          ['/instructions'],
        );
  return { equal, pinned: pinned.digest, observed: observed.digest, text, severity: equal ? null : 'high' };
}

/** The instructions comparison as text, in the layout of formatDriftExplanation. */
export function formatInstructionsDrift(drift: InstructionsDrift): string {
  if (drift.equal) return `instructions: no drift (${drift.pinned})\n`;
  const lines = ['instructions: changed  [high]'];
  for (const change of drift.text) lines.push(`  ${escapeInvisible(change.path)}: ${change.diff}`);
  if (drift.text.length === 0)
    lines.push('  the pin holds no text of the instructions: only the digests differ');
  lines.push(`  digest:  ${drift.pinned} -> ${drift.observed}`);
  return lines.join('\n') + '\n';
}
