import { canonicalizeJson } from '@toolpin/digest';
import { isHashedMember, type ExtraMembers } from '../explain/extraMembers.js';
import type { PinView } from './pinView.js';

// The RFC 8785 text of each member of a record, computed once per record. A pinned record lives as
// long as its configuration and an observed one as long as its (cached, shared) observation, so
// a tools/call compares two strings instead of canonicalizing again. Both are never mutated:
// pinned records are deep-frozen, observed ones are what JSON.parse produced for a listing.
const CANONICAL = new WeakMap<ExtraMembers, Map<string, string | null>>();

function canonicalMember(record: ExtraMembers, member: string): string | null {
  let texts = CANONICAL.get(record);
  if (texts === undefined) {
    texts = new Map();
    CANONICAL.set(record, texts);
  }
  let text = texts.get(member);
  if (text === undefined) {
    try {
      text = canonicalizeJson(record[member]);
    } catch {
      text = null; // no canonical form: equal to nothing
    }
    texts.set(member, text);
  }
  return text;
}

/** The members the pin records by value for a tool key, if any. */
export function recordedMembers(pin: PinView, key: string): ExtraMembers | undefined {
  return Object.hasOwn(pin.extraMembers, key) ? pin.extraMembers[key] : undefined;
}

/**
 * True when every member the pin records for a tool is served with an equal value (by RFC 8785
 * form). Members the pin does not record are not compared: they never reach a client.
 */
export function recordedMembersMatch(
  recorded: ExtraMembers | undefined,
  served: ExtraMembers | undefined,
): boolean {
  if (recorded === undefined) return true;
  if (served === undefined) return false;
  // Listing after listing compares the same two records: the answer is remembered.
  const known = LAST_MATCH.get(served);
  if (known?.recorded === recorded) return known.match;
  const match = compareRecorded(recorded, served);
  LAST_MATCH.set(served, { recorded, match });
  return match;
}

// Per served record, the pinned record it was last compared with, and the answer.
const LAST_MATCH = new WeakMap<ExtraMembers, { readonly recorded: ExtraMembers; readonly match: boolean }>();

function compareRecorded(recorded: ExtraMembers, served: ExtraMembers): boolean {
  for (const member of Object.keys(recorded)) {
    if (!Object.hasOwn(served, member)) return false;
    const pinned = canonicalMember(recorded, member);
    if (pinned === null || pinned !== canonicalMember(served, member)) return false;
  }
  return true;
}

function covered(member: string, value: unknown, recorded: ExtraMembers | undefined): boolean {
  if (value === null || value === undefined) return false;
  return isHashedMember(member) || (recorded !== undefined && Object.hasOwn(recorded, member));
}

/**
 * The definition a client receives for a verified tool: the six hashed members (verified by the
 * digest; null ones, which the digest treats as absent, left out) and the members the pin records
 * (verified by value, so the served value is the pinned one), nothing else. The tool object itself
 * when it has nothing more, else a copy in the served member order. The names of the stripped
 * members that had a value are appended to `stripped`.
 */
export function clientDefinition(
  tool: Readonly<Record<string, unknown>>,
  recorded: ExtraMembers | undefined,
  stripped: string[],
): Readonly<Record<string, unknown>> {
  let strip = false;
  for (const member of Object.keys(tool)) {
    const value = tool[member];
    if (covered(member, value, recorded)) continue;
    strip = true;
    if (value !== null && value !== undefined) stripped.push(member);
  }
  if (!strip) return tool;
  // fromEntries defines each member, so one named "__proto__" stays a member.
  return Object.fromEntries(
    Object.entries(tool).filter(([member, value]) => covered(member, value, recorded)),
  );
}
