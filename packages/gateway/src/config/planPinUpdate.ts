import { encodeToolKey, TOOLS_OVERFLOW_KEY } from '@toolpin/digest';
import { explainDrift, type DriftExplanation, type ToolDrift } from '../explain/explainDrift.js';
import type { UnpinnedMembers } from '../explain/explainExtraMembers.js';
import { joinDefinition, sameJsonValue, type PinnedDefinition } from '../explain/extraMembers.js';
import type { CatalogPin } from './pinFromCatalog.js';
import type { PinnedSurface } from './pinSurfaces.js';
import { planSurfaceUpdates, type SurfaceApproval, type SurfacesUpdate } from './planSurfaceUpdate.js';
import type { InstructionsDrift } from '../explain/explainInstructions.js';
import type { PinDocumentUpdate } from './updatePinDocument.js';
import type { ServerConfig } from './types.js';
import { foldPinnedItems } from './foldPinnedItems.js';

/** A planned approval: the rewrite, what it approves, and the whole explanation it was made from. */
export interface PinUpdatePlan extends PinDocumentUpdate {
  readonly explanation: DriftExplanation;
  /** The drift entries this update approves (all of them, or those of the named tools). */
  readonly approved: readonly ToolDrift[];
  /** The served members, not recorded so far, that this update pins by value (all, or the named tools'). */
  readonly recorded: readonly UnpinnedMembers[];
  /** Per pinned surface beside tools that was observed: its explanation and the entries approved. */
  readonly surfaces: Partial<Record<PinnedSurface, SurfaceApproval>>;
  /** Set when the instructions drifted: the drift, and whether this update approves it. */
  readonly instructionsApproved?: { readonly drift: InstructionsDrift; readonly approved: boolean };
}

/** The outcome of {@link planPinUpdate}: a plan, or why the request cannot be planned. */
export type PinUpdatePlanResult =
  { readonly ok: true; readonly plan: PinUpdatePlan } | { readonly ok: false; readonly message: string };

type Side = Pick<CatalogPin, 'definitions' | 'extraMembers'>;

/** The whole definition a side holds for a key (every member), if it holds one. */
function pinnedDefinitionOf(side: Side, key: string): PinnedDefinition | undefined {
  if (!Object.hasOwn(side.definitions, key)) return undefined;
  const extras = Object.hasOwn(side.extraMembers, key) ? side.extraMembers[key] : undefined;
  return joinDefinition(side.definitions[key] ?? {}, extras);
}

interface Selection {
  readonly entries: ToolDrift[];
  readonly recorded: UnpinnedMembers[];
}

function selectEntries(
  explanation: DriftExplanation,
  names: readonly string[],
  known: (key: string) => boolean,
): Selection | { message: string } {
  const entries = new Set<ToolDrift>();
  const recorded = new Set<UnpinnedMembers>();
  for (const name of names) {
    const key = encodeToolKey(name);
    const matches = explanation.drift.filter((entry) => entry.key === key || entry.from?.key === key);
    const unpinned = explanation.unpinned.filter((entry) => entry.key === key);
    if (matches.length === 0 && unpinned.length === 0)
      return {
        message: known(key)
          ? `--tool ${JSON.stringify(name)}: the live catalog shows no drift and no unpinned member for this tool`
          : `--tool ${JSON.stringify(name)}: there is no such tool (the pin does not hold it and the server does not list it)`,
      };
    for (const entry of matches) entries.add(entry);
    for (const entry of unpinned) recorded.add(entry);
  }
  return { entries: [...entries], recorded: [...recorded] };
}

/** Options of {@link planPinUpdate}. */
export interface PinUpdateOptions {
  /**
   * Approve only the drift entries of low severity (docs/drift-severity.md), all at once; high ones
   * and served members not recorded so far are left as they are. Not with tool names. @default false
   */
  readonly lowOnly?: boolean;
  /** Approve only these prompts (names), beside the named tools. */
  readonly prompts?: readonly string[];
  /** Approve only these resource templates (uriTemplates), beside the named tools. */
  readonly templates?: readonly string[];
  /** Approve the observed instructions, beside the named items. */
  readonly instructions?: boolean;
}

/** How an observed catalog differs from a server's pin, tool by tool (what `check` shows and `approve` plans from). */
export function explainPinDrift(current: ServerConfig, observed: CatalogPin): DriftExplanation {
  return explainDrift(
    {
      tools: { ...current.pin.tools },
      definitions: { ...current.definitions },
      extraMembers: current.extraMembers,
    },
    {
      tools: { ...observed.pin.tools },
      definitions: observed.definitions,
      extraMembers: observed.extraMembers,
    },
  );
}

/**
 * Plans the approval of an observed catalog against a server's current pin: with no `tools`, the
 * pin becomes the observed catalog, every member of every definition recorded; with tool names,
 * only their entries change (a rename moves both keys); with `lowOnly`, only the entries of low
 * severity change. The new catalog digest is the fold of the resulting tool digests.
 */
export function planPinUpdate(
  current: ServerConfig,
  observed: CatalogPin,
  tools?: readonly string[],
  options: PinUpdateOptions = {},
): PinUpdatePlanResult {
  const lowOnly = options.lowOnly === true;
  const named =
    (tools?.length ?? 0) > 0 ||
    (options.prompts?.length ?? 0) > 0 ||
    (options.templates?.length ?? 0) > 0 ||
    options.instructions === true;
  if (lowOnly && named)
    return {
      ok: false,
      message:
        'approve either the low-severity drift (--low) or named items (--tool, --prompt, --template, --instructions), not both',
    };
  const surfaces = planSurfaceUpdates(
    current,
    observed,
    lowOnly
      ? 'low'
      : named
        ? {
            ...(options.prompts === undefined ? {} : { prompts: options.prompts }),
            ...(options.templates === undefined ? {} : { templates: options.templates }),
            ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
          }
        : 'all',
  );
  if ('message' in surfaces) return { ok: false, message: surfaces.message };
  const toolsPlan = planToolsUpdate(current, observed, named ? (tools ?? []) : undefined, lowOnly);
  if (!toolsPlan.ok) return toolsPlan;
  return { ok: true, plan: withSurfaces(toolsPlan.plan, surfaces) };
}

// The tools' part and the other surfaces' part of one approval, as one rewrite.
function withSurfaces(plan: ToolsPlan, surfaces: SurfacesUpdate): PinUpdatePlan {
  return {
    ...plan,
    pin: { ...plan.pin, ...surfaces.pin },
    definitions: {
      set: { ...plan.definitions.set, ...surfaces.set },
      remove: [...plan.definitions.remove, ...surfaces.remove],
    },
    ...(surfaces.instructions === undefined ? {} : { instructions: surfaces.instructions }),
    surfaces: surfaces.surfaces,
    ...(surfaces.instructionsApproved === undefined
      ? {}
      : { instructionsApproved: surfaces.instructionsApproved }),
  };
}

type ToolsPlan = Omit<PinUpdatePlan, 'surfaces' | 'instructionsApproved'>;

/**
 * The tools' part: with `tools` undefined the pin's tools become the observed ones; with names,
 * only their entries change (none named: the tools stay as pinned); with `lowOnly`, only the
 * entries of low severity. The new catalog digest is the fold of the resulting tool digests.
 */
function planToolsUpdate(
  current: ServerConfig,
  observed: CatalogPin,
  tools: readonly string[] | undefined,
  lowOnly: boolean,
): { ok: true; plan: ToolsPlan } | { ok: false; message: string } {
  const explanation = explainPinDrift(current, observed);
  if (!lowOnly && tools === undefined)
    return { ok: true, plan: planWholeCatalog(current, observed, explanation) };
  const touched = lowOnly || (tools?.length ?? 0) > 0;
  // A pin written before every tool was pinned holds tools:overflow in place of the tools beyond
  // 500: no single one of those can be approved on its own until the catalog is approved whole.
  if (touched && Object.hasOwn(current.pin.tools, TOOLS_OVERFLOW_KEY)) {
    return {
      ok: false,
      message:
        'the pin holds tools:overflow in place of its tools beyond 500 (written before each tool was pinned): approve the catalog whole once (without --tool)',
    };
  }
  const selected = lowOnly
    ? { entries: explanation.drift.filter((entry) => entry.severity === 'low'), recorded: [] }
    : (tools ?? []).length === 0
      ? { entries: [], recorded: [] }
      : selectEntries(
          explanation,
          tools ?? [],
          (key) => Object.hasOwn(current.pin.tools, key) || Object.hasOwn(observed.pin.tools, key),
        );
  if ('message' in selected) return { ok: false, message: selected.message };
  const keys = new Set([
    ...selected.entries.flatMap((entry) =>
      entry.from === undefined ? [entry.key] : [entry.from.key, entry.key],
    ),
    ...selected.recorded.map((entry) => entry.key),
  ]);
  const { next, definitions } = updateKeys(current, observed, keys);
  const pin = touched
    ? { ...foldPinnedItems(next, { profile: current.profile, overflowKey: TOOLS_OVERFLOW_KEY }), tools: next }
    : { catalog: current.pin.catalog, tools: next, ...overflowOf(current.pin) };
  const plan = { pin, definitions, explanation, approved: selected.entries, recorded: selected.recorded };
  return { ok: true, plan };
}

function overflowOf(pin: { readonly overflow?: string }): { overflow?: string } {
  return pin.overflow === undefined ? {} : { overflow: pin.overflow };
}

/** The whole observed catalog approved: every drift, every member to record. */
function planWholeCatalog(
  current: ServerConfig,
  observed: CatalogPin,
  explanation: DriftExplanation,
): ToolsPlan {
  const set: Record<string, PinnedDefinition> = {};
  for (const key of Object.keys(observed.definitions)) {
    const definition = pinnedDefinitionOf(observed, key);
    if (definition !== undefined && !sameJsonValue(pinnedDefinitionOf(current, key), definition))
      set[key] = definition;
  }
  const remove = Object.keys(current.definitions).filter((key) => !Object.hasOwn(observed.definitions, key));
  return {
    pin: { catalog: observed.pin.catalog, tools: observed.pin.tools, ...overflowOf(observed.pin) },
    definitions: { set, remove },
    explanation,
    approved: explanation.drift,
    recorded: explanation.unpinned,
  };
}

/** The pin's tool digests and definitions with `keys` taken from the observed catalog (gone when it has none). */
function updateKeys(
  current: ServerConfig,
  observed: CatalogPin,
  keys: ReadonlySet<string>,
): { next: Record<string, string>; definitions: ToolsPlan['definitions'] } {
  const next: Record<string, string> = { ...current.pin.tools };
  const set: Record<string, PinnedDefinition> = {};
  const remove: string[] = [];
  for (const key of keys) {
    const digest = observed.pin.tools[key];
    const definition = pinnedDefinitionOf(observed, key);
    if (digest === undefined) delete next[key];
    else next[key] = digest;
    if (definition !== undefined) set[key] = definition;
    else if (Object.hasOwn(current.definitions, key)) remove.push(key);
  }
  return { next, definitions: { set, remove } };
}
