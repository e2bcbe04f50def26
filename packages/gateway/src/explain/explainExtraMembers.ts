import { changedPointers } from '@toolpin/digest';
import { sameJsonValue, type ExtraMembers } from './extraMembers.js';
import { textChanges, type TextChange } from './textChanges.js';

/** A tool whose served definition has members its pin does not record (the gateway strips them). */
export interface UnpinnedMembers {
  readonly key: string;
  readonly tool: string | null;
  /** The unrecorded members, sorted. */
  readonly members: readonly string[];
}

/** How the members a pin records by value differ from those a server serves. */
export interface ExtraMembersChange {
  /** The recorded members whose served value differs or is missing, sorted. */
  readonly members: readonly string[];
  /** RFC 6901 pointers of the differing values (`/_meta/ui~1resourceUri`). */
  readonly paths: readonly string[];
  /** Old -> new of each changed value: word diffs of texts, compact JSON of other values. */
  readonly text: readonly TextChange[];
}

function escapeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function servedValue(observed: ExtraMembers | undefined, member: string): unknown {
  return observed !== undefined && Object.hasOwn(observed, member) ? observed[member] : undefined;
}

function pointersOf(member: string, before: unknown, after: unknown): string[] {
  const base = `/${escapeToken(member)}`;
  try {
    return changedPointers(before, after, base);
  } catch {
    // A served value without a canonical form (a lone surrogate) differs as a whole.
    return [base];
  }
}

/**
 * Compares the members a pin records by value with the served ones (`observed` undefined: the
 * tool serves none). Members the pin does not record are not compared: they are stripped, not drift.
 */
export function explainExtraMembers(
  recorded: ExtraMembers,
  observed: ExtraMembers | undefined,
): ExtraMembersChange {
  const members = Object.keys(recorded)
    .sort()
    .filter((member) => !sameJsonValue(recorded[member], servedValue(observed, member)));
  const paths = members.flatMap((member) =>
    pointersOf(member, recorded[member], servedValue(observed, member)),
  );
  const served = Object.fromEntries(members.map((member) => [member, servedValue(observed, member)]));
  return { members, paths, text: textChanges(recorded, served, paths, { values: true }) };
}

/** The served members outside the six that the pin does not record, sorted (empty when none). */
export function unpinnedMembers(
  recorded: ExtraMembers | undefined,
  observed: ExtraMembers | undefined,
): string[] {
  if (observed === undefined) return [];
  return Object.keys(observed)
    .filter((member) => recorded === undefined || !Object.hasOwn(recorded, member))
    .sort();
}
