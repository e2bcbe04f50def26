import {
  definitionOf,
  diffCatalogs,
  type CatalogDiff,
  type CatalogSide,
  type RestrictedTool,
} from '@toolpin/digest';
import type { ExtraMembers } from './extraMembers.js';
import { detectRenames } from './detectRenames.js';
import { judgeDriftSeverity, type DriftSeverity, type PathSeverity } from './driftSeverity.js';
import { explainExtraMembers, unpinnedMembers, type UnpinnedMembers } from './explainExtraMembers.js';
import { textChanges, type TextChange } from './textChanges.js';

export type { TextChange } from './textChanges.js';

/** How two definitions of one tool differ. */
export interface DefinitionChange {
  /** The members that differ: hashed ones in spec order, then members pinned by value, sorted. */
  readonly members: readonly string[];
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
  readonly members?: readonly string[];
  readonly paths?: readonly string[];
  readonly text?: readonly TextChange[];
  /**
   * How much the drift matters (docs/drift-severity.md): for `changed` the highest of its paths';
   * `renamed` and `added` are high, `removed` is low.
   */
  readonly severity: DriftSeverity;
  /** For `changed`: the severity and rule of each entry of `paths`, in the same order. */
  readonly severities?: readonly PathSeverity[];
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
  /**
   * Tools (changed or unchanged) whose observed definition has members the pin does not record:
   * the gateway strips them until `toolpin approve` records them. Not drift.
   */
  readonly unpinned: readonly UnpinnedMembers[];
}

/** One side of an explanation: digests, definitions, and the members outside the six per key. */
export interface ExplainSide extends CatalogSide {
  /** Key -> members outside the six: pinned by value (a pin), or as served (a catalog). */
  readonly extraMembers?: Readonly<Record<string, ExtraMembers>>;
}

// The text members the issue names, checked even when a whole parent object appeared or vanished
// (then the changed path is `/annotations`, not `/annotations/title`).
const TEXT_POINTERS = ['/title', '/description', '/annotations/title'];

/** Options of {@link explainDrift}: which surface the definitions are of. */
export interface ExplainOptions {
  /**
   * The hashed members of one definition, in order: a prompt's or a resource template's
   * (docs/pin-surfaces.md). @default a tool's six (HASHED_MEMBERS)
   */
  readonly members?: readonly string[];
}

/** Which members and paths of two definitions of one tool differ, with word diffs of changed texts. */
export function explainDefinitionChange(
  pinned: RestrictedTool,
  observed: RestrictedTool,
  options: ExplainOptions = {},
): DefinitionChange {
  // diffCatalogs holds the member and path walk; two one-tool sides with distinct digests ask it
  // to compare just these definitions.
  const change = diffCatalogs(
    { tools: { 'tool:x': 'pinned' }, definitions: { 'tool:x': pinned } },
    { tools: { 'tool:x': 'observed' }, definitions: { 'tool:x': observed } },
    diffOptions(options),
  ).changed[0];
  const members = change?.members ?? [];
  const paths = change?.paths ?? [];
  // Every changed value is shown old -> new: text as a word diff, other values as their compact JSON.
  return {
    members,
    paths,
    text: textChanges(pinned, observed, paths, { pointers: TEXT_POINTERS, values: true }),
  };
}

function nameOf(side: CatalogSide, key: string): string | null {
  const name =
    side.definitions !== undefined && Object.hasOwn(side.definitions, key)
      ? side.definitions[key]?.name
      : undefined;
  return typeof name === 'string' ? name : null;
}

function diffOptions(options: ExplainOptions): { members?: readonly string[] } {
  return options.members === undefined ? {} : { members: options.members };
}

function explained(
  pinned: RestrictedTool | undefined,
  observed: RestrictedTool | undefined,
  options: ExplainOptions,
): Partial<DefinitionChange> {
  if (pinned === undefined || observed === undefined) return {};
  return explainDefinitionChange(pinned, observed, options);
}

function extrasOf(side: ExplainSide, key: string): ExtraMembers | undefined {
  return side.extraMembers !== undefined && Object.hasOwn(side.extraMembers, key)
    ? side.extraMembers[key]
    : undefined;
}

// The members pinned by value are compared only where the observed side holds the definition: a
// side of digests alone says nothing about them.
function extrasChange(pinned: ExplainSide, observed: ExplainSide, key: string): DefinitionChange | undefined {
  const recorded = extrasOf(pinned, key);
  if (recorded === undefined || definitionOf(observed, key) === undefined) return undefined;
  const change = explainExtraMembers(recorded, extrasOf(observed, key));
  return change.members.length === 0 ? undefined : change;
}

/** Two explanations of one tool as one: hashed members first (what the digest says), then the members pinned by value. */
export function joinChanges(
  hashed: Partial<DefinitionChange>,
  extras: DefinitionChange | undefined,
): Partial<DefinitionChange> {
  if (extras === undefined) return hashed;
  return {
    members: [...(hashed.members ?? []), ...extras.members],
    paths: [...(hashed.paths ?? []), ...extras.paths],
    text: [...(hashed.text ?? []), ...extras.text],
  };
}

function judged(
  pinned: ExplainSide,
  observed: ExplainSide,
  key: string,
  paths: readonly string[] | undefined,
  options: ExplainOptions,
): Pick<ToolDrift, 'severity' | 'severities'> {
  const judgment = judgeDriftSeverity(
    definitionOf(pinned, key),
    definitionOf(observed, key),
    paths,
    options.members,
  );
  if (paths === undefined) return { severity: judgment.severity };
  return { severity: judgment.severity, severities: judgment.severities };
}

function changedEntries(
  pinned: ExplainSide,
  observed: ExplainSide,
  diff: CatalogDiff,
  options: ExplainOptions,
): ToolDrift[] {
  const entries: ToolDrift[] = [];
  for (const change of diff.changed) {
    const hashed = explained(definitionOf(pinned, change.key), definitionOf(observed, change.key), options);
    const explanation = joinChanges(
      {
        ...(change.members === undefined ? {} : { members: change.members }),
        ...(change.paths === undefined ? {} : { paths: change.paths }),
        ...(hashed.text === undefined ? {} : { text: hashed.text }),
      },
      extrasChange(pinned, observed, change.key),
    );
    entries.push({
      kind: 'changed',
      key: change.key,
      tool: change.name ?? null,
      pinned: change.pinned,
      observed: change.observed,
      ...explanation,
      ...judged(pinned, observed, change.key, explanation.paths, options),
    });
  }
  // Same digest, but a member pinned by value differs: drift like any other.
  for (const key of diff.unchanged) {
    const extras = extrasChange(pinned, observed, key);
    if (extras === undefined) continue;
    const digest = pinned.tools[key] ?? null;
    const tool = nameOf(observed, key) ?? nameOf(pinned, key);
    entries.push({
      kind: 'changed',
      key,
      tool,
      pinned: digest,
      observed: digest,
      ...extras,
      ...judged(pinned, observed, key, extras.paths, options),
    });
  }
  return entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function unpinnedOf(pinned: ExplainSide, observed: ExplainSide, diff: CatalogDiff): UnpinnedMembers[] {
  const found: UnpinnedMembers[] = [];
  const keys = [...diff.changed.map((change) => change.key), ...diff.unchanged].sort();
  for (const key of keys) {
    if (definitionOf(observed, key) === undefined) continue;
    const members = unpinnedMembers(extrasOf(pinned, key), extrasOf(observed, key));
    if (members.length > 0) found.push({ key, tool: nameOf(observed, key), members });
  }
  return found;
}

/**
 * Compares a pinned catalog with an observed one and explains each difference: for a changed
 * tool the members, JSON Pointer paths and word diffs of texts (when the pin holds the pinned
 * definition), including the members pinned by value, whose change is drift even under an equal
 * digest; a removed and an added key whose definitions are identical but for the name are one
 * `renamed` entry. Served members the pin does not record are listed in `unpinned`, not as drift.
 * The same for prompts and resource templates with `options.members` (their keys, digests and
 * definitions in the sides' `tools` and `definitions`).
 */
export function explainDrift(
  pinned: ExplainSide,
  observed: ExplainSide,
  options: ExplainOptions = {},
): DriftExplanation {
  const diff = diffCatalogs(pinned, observed, diffOptions(options));
  const renames = detectRenames(
    diff.removed.map(({ key }) => ({ key, definition: definitionOf(pinned, key) })),
    diff.added.map(({ key }) => ({ key, definition: definitionOf(observed, key) })),
  );
  const renamedFrom = new Set(renames.map((rename) => rename.from));
  const renamedTo = new Set(renames.map((rename) => rename.to));
  const drift = changedEntries(pinned, observed, diff, options);
  const changedByMembers = drift.length - diff.changed.length;
  for (const { from, to } of renames) {
    drift.push({
      kind: 'renamed',
      key: to,
      tool: nameOf(observed, to),
      pinned: pinned.tools[from] ?? null,
      observed: observed.tools[to] ?? null,
      from: { key: from, tool: nameOf(pinned, from) },
      ...explained(definitionOf(pinned, from), definitionOf(observed, to), options),
      severity: 'high',
    });
  }
  for (const { key, digest } of diff.added) {
    if (!renamedTo.has(key))
      drift.push({
        kind: 'added',
        key,
        tool: nameOf(observed, key),
        pinned: null,
        observed: digest,
        severity: 'high',
      });
  }
  for (const { key, digest } of diff.removed) {
    if (!renamedFrom.has(key))
      drift.push({
        kind: 'removed',
        key,
        tool: nameOf(pinned, key),
        pinned: digest,
        observed: null,
        severity: 'low',
      });
  }
  return {
    equal: diff.equal && changedByMembers === 0,
    wrongSubject: diff.wrongSubject,
    drift,
    unchanged: diff.unchanged.length - changedByMembers,
    unpinned: unpinnedOf(pinned, observed, diff),
  };
}
