import { diffCatalogs, type CatalogSide, type HashedMember, type RestrictedTool } from '@toolpin/digest';
import { detectRenames } from './detectRenames.js';
import { diffWords } from './wordDiff.js';

/** A word-level diff of one changed text value, at its JSON Pointer in the definition. */
export interface TextChange {
  /** RFC 6901 pointer, e.g. `/description` or `/inputSchema/properties/q/description`. */
  readonly path: string;
  /** `… unchanged words [-deleted-] [+inserted+] …` (see diffWords). */
  readonly diff: string;
}

/** How two definitions of one tool differ. */
export interface DefinitionChange {
  /** The hashed members that differ, in spec order. */
  readonly members: readonly HashedMember[];
  /** RFC 6901 pointers of the differing values. */
  readonly paths: readonly string[];
  /** Word diffs of the changed text values (description, title, annotations.title, schema texts). */
  readonly text: readonly TextChange[];
}

/** Kinds of explained drift: a rename is a removed and an added key that differ only by name. */
export type ToolDriftKind = 'changed' | 'renamed' | 'added' | 'removed';

/** One tool whose observed state differs from the pin, explained. */
export interface ToolDrift {
  readonly kind: ToolDriftKind;
  /** The observed key (the pinned one for `removed`). */
  readonly key: string;
  /** The tool's name when known (from a definition). */
  readonly tool: string | null;
  readonly pinned: string | null;
  readonly observed: string | null;
  /** For `renamed`: the pinned key and name. */
  readonly from?: { readonly key: string; readonly tool: string | null };
  /** For `changed` and `renamed` when both definitions are known. */
  readonly members?: readonly HashedMember[];
  readonly paths?: readonly string[];
  readonly text?: readonly TextChange[];
}

/** A pinned catalog compared with an observed one, tool by tool, with the why of each change. */
export interface DriftExplanation {
  /** Same keys with the same digests. */
  readonly equal: boolean;
  /** No observed key is pinned: another server's catalog. */
  readonly wrongSubject: boolean;
  /** Changed, renamed, added, then removed tools, each group sorted by key. */
  readonly drift: readonly ToolDrift[];
  /** How many tools are unchanged. */
  readonly unchanged: number;
}

// The text members the issue names, checked even when a whole parent object appeared or vanished
// (then the changed path is `/annotations`, not `/annotations/title`).
const TEXT_POINTERS = ['/title', '/description', '/annotations/title'];
const MAX_TEXT_CHANGES = 10;

function valueAt(value: unknown, pointer: string): unknown {
  let current = value;
  for (const token of pointer.split('/').slice(1)) {
    const name = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, name)) return undefined;
    current = (current as Record<string, unknown>)[name];
  }
  return current;
}

function textChanges(
  pinned: RestrictedTool,
  observed: RestrictedTool,
  paths: readonly string[],
): TextChange[] {
  const changes: TextChange[] = [];
  for (const path of new Set([...TEXT_POINTERS, ...paths])) {
    if (changes.length >= MAX_TEXT_CHANGES) break;
    const before = valueAt(pinned, path);
    const after = valueAt(observed, path);
    const isText = (v: unknown): boolean => typeof v === 'string' || v === undefined;
    if (before === after || !isText(before) || !isText(after)) continue;
    const diff = diffWords((before as string | undefined) ?? '', (after as string | undefined) ?? '');
    if (diff !== '') changes.push({ path, diff });
  }
  return changes;
}

/** Which members and paths of two definitions of one tool differ, with word diffs of changed texts. */
export function explainDefinitionChange(pinned: RestrictedTool, observed: RestrictedTool): DefinitionChange {
  // diffCatalogs holds the member and path walk; two one-tool sides with distinct digests ask it
  // to compare just these definitions.
  const change = diffCatalogs(
    { tools: { 'tool:x': 'pinned' }, definitions: { 'tool:x': pinned } },
    { tools: { 'tool:x': 'observed' }, definitions: { 'tool:x': observed } },
  ).changed[0];
  const members = change?.members ?? [];
  const paths = change?.paths ?? [];
  return { members, paths, text: textChanges(pinned, observed, paths) };
}

function nameOf(side: CatalogSide, key: string): string | null {
  const name =
    side.definitions !== undefined && Object.hasOwn(side.definitions, key)
      ? side.definitions[key]?.name
      : undefined;
  return typeof name === 'string' ? name : null;
}

function definitionOf(side: CatalogSide, key: string): RestrictedTool | undefined {
  return side.definitions !== undefined && Object.hasOwn(side.definitions, key)
    ? side.definitions[key]
    : undefined;
}

function explained(
  pinned: RestrictedTool | undefined,
  observed: RestrictedTool | undefined,
): Partial<DefinitionChange> {
  if (pinned === undefined || observed === undefined) return {};
  return explainDefinitionChange(pinned, observed);
}

/**
 * Compares a pinned catalog with an observed one and explains each difference: for a changed
 * tool the members, JSON Pointer paths and word diffs of texts (when the pin holds the pinned
 * definition); a removed and an added key whose definitions are identical but for the name are
 * one `renamed` entry.
 */
export function explainDrift(pinned: CatalogSide, observed: CatalogSide): DriftExplanation {
  const diff = diffCatalogs(pinned, observed);
  const renames = detectRenames(
    diff.removed.map(({ key }) => ({ key, definition: definitionOf(pinned, key) })),
    diff.added.map(({ key }) => ({ key, definition: definitionOf(observed, key) })),
  );
  const renamedFrom = new Set(renames.map((rename) => rename.from));
  const renamedTo = new Set(renames.map((rename) => rename.to));
  const drift: ToolDrift[] = [];
  for (const change of diff.changed) {
    const text = explained(definitionOf(pinned, change.key), definitionOf(observed, change.key)).text;
    drift.push({
      kind: 'changed',
      key: change.key,
      tool: change.name ?? null,
      pinned: change.pinned,
      observed: change.observed,
      ...(change.members === undefined ? {} : { members: change.members }),
      ...(change.paths === undefined ? {} : { paths: change.paths }),
      ...(text === undefined ? {} : { text }),
    });
  }
  for (const { from, to } of renames) {
    drift.push({
      kind: 'renamed',
      key: to,
      tool: nameOf(observed, to),
      pinned: pinned.tools[from] ?? null,
      observed: observed.tools[to] ?? null,
      from: { key: from, tool: nameOf(pinned, from) },
      ...explained(definitionOf(pinned, from), definitionOf(observed, to)),
    });
  }
  for (const { key, digest } of diff.added) {
    if (!renamedTo.has(key))
      drift.push({ kind: 'added', key, tool: nameOf(observed, key), pinned: null, observed: digest });
  }
  for (const { key, digest } of diff.removed) {
    if (!renamedFrom.has(key))
      drift.push({ kind: 'removed', key, tool: nameOf(pinned, key), pinned: digest, observed: null });
  }
  return { equal: diff.equal, wrongSubject: diff.wrongSubject, drift, unchanged: diff.unchanged.length };
}
