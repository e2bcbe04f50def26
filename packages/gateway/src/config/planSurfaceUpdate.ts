import { digestInstructions } from '@toolpin/digest';
import { explainDrift, type DriftExplanation, type ToolDrift } from '../explain/explainDrift.js';
import { explainInstructions, type InstructionsDrift } from '../explain/explainInstructions.js';
import { sameJsonValue } from '../explain/extraMembers.js';
import type { CatalogPin } from './pinFromCatalog.js';
import { PIN_SURFACES, type PinnedSurface, type PinSurface } from './pinSurfaces.js';
import type { PinConfig, ServerConfig } from './types.js';
import { foldPinnedItems } from './foldPinnedItems.js';

/** The surfaces of a pin and an observation compared (only those the pin pins and the observation holds). */
export interface SurfacesExplanation {
  readonly prompts?: DriftExplanation;
  readonly resourceTemplates?: DriftExplanation;
  readonly instructions?: InstructionsDrift;
}

/** Which items beside tools an approval names: none given = every change of every pinned surface. */
export interface SurfaceSelection {
  /** Prompt names. */
  readonly prompts?: readonly string[];
  /** Resource template uriTemplates. */
  readonly templates?: readonly string[];
  /** Approve the observed instructions. */
  readonly instructions?: boolean;
}

/** One surface's part of a planned approval. */
export interface SurfaceApproval {
  readonly explanation: DriftExplanation;
  readonly approved: readonly ToolDrift[];
}

/** What a planned approval changes beside tools. */
export interface SurfacesUpdate {
  readonly pin: Pick<PinConfig, PinnedSurface | 'instructions'>;
  readonly set: Record<string, Record<string, unknown>>;
  readonly remove: string[];
  /** The top-level text: a string writes it, null removes it, absent leaves it. */
  readonly instructions?: string | null;
  readonly surfaces: Partial<Record<PinnedSurface, SurfaceApproval>>;
  /** Set when the instructions drifted: whether this update approves them. */
  readonly instructionsApproved?: { readonly drift: InstructionsDrift; readonly approved: boolean };
}

type Side = Pick<ServerConfig, 'pin' | 'promptDefinitions' | 'templateDefinitions' | 'instructions'>;

function sideOf(
  pin: PinConfig,
  definitions: Readonly<Record<string, Record<string, unknown>>> | undefined,
  surface: PinSurface,
): { tools: Record<string, string>; definitions: Record<string, Record<string, unknown>> } | undefined {
  const section = pin[surface.section];
  if (section === undefined) return undefined;
  return { tools: { ...section.items }, definitions: { ...definitions } };
}

/** How an observed surface differs from the pin, in the layout of tools; undefined when either side lacks it. */
export function explainSurfaceDrift(
  current: Side,
  observed: CatalogPin,
  surface: PinSurface,
): DriftExplanation | undefined {
  const pinned = sideOf(current.pin, current[surface.definitions], surface);
  const seen = sideOf(observed.pin, observed[surface.definitions], surface);
  if (pinned === undefined || seen === undefined) return undefined;
  return explainDrift(pinned, seen, { members: surface.members });
}

/**
 * The instructions text a side shows beside its digest: the recorded text; `null` when the digest
 * says the server sends no instructions; undefined when only the digest is known.
 */
export function instructionsText(digest: string, text: string | undefined): string | null | undefined {
  if (text !== undefined) return text;
  return digest === digestInstructions(undefined) ? null : undefined;
}

/** How the observed instructions differ from the pinned ones; undefined when either side lacks them. */
export function explainPinnedInstructions(
  current: Side,
  observed: CatalogPin,
): InstructionsDrift | undefined {
  const pinned = current.pin.instructions;
  const seen = observed.pin.instructions;
  if (pinned === undefined || seen === undefined) return undefined;
  return explainInstructions(
    { digest: pinned, text: instructionsText(pinned, current.instructions) },
    { digest: seen, text: instructionsText(seen, observed.instructions) },
  );
}

/** Every surface beside tools compared, for `check`, `approve` and the plan. */
export function explainSurfaces(current: Side, observed: CatalogPin): SurfacesExplanation {
  const out: { -readonly [K in keyof SurfacesExplanation]: SurfacesExplanation[K] } = {};
  for (const surface of PIN_SURFACES) {
    const explanation = explainSurfaceDrift(current, observed, surface);
    if (explanation !== undefined) out[surface.section] = explanation;
  }
  const instructions = explainPinnedInstructions(current, observed);
  if (instructions !== undefined) out.instructions = instructions;
  return out;
}

function selectByName(
  surface: PinSurface,
  explanation: DriftExplanation,
  names: readonly string[],
): ToolDrift[] | { message: string } {
  const selected = new Set<ToolDrift>();
  for (const name of names) {
    const key = surface.encodeKey(name);
    const matches = explanation.drift.filter((entry) => entry.key === key || entry.from?.key === key);
    if (matches.length === 0)
      return {
        message: `${surface.flag} ${JSON.stringify(name)}: the live ${surface.items} show no drift for this ${surface.item}`,
      };
    for (const entry of matches) selected.add(entry);
  }
  return [...selected];
}

/** How one surface is approved: all of it, its low-severity entries, the named items, or nothing. */
type Mode = { readonly all: true } | { readonly low: true } | { readonly names: readonly string[] };

/**
 * Plans the approval of the surfaces beside tools: every pinned surface the observation holds, per
 * `mode` (all; only low drift; only the named prompts, templates and the instructions). A surface
 * with more than 500 items folds into its overflow entry and can only be approved whole.
 */
export function planSurfaceUpdates(
  current: Side,
  observed: CatalogPin,
  selection: SurfaceSelection | 'all' | 'low',
): SurfacesUpdate | { message: string } {
  const explained = explainSurfaces(current, observed);
  const update: {
    pin: { -readonly [K in PinnedSurface | 'instructions']?: PinConfig[K] };
    set: Record<string, Record<string, unknown>>;
    remove: string[];
    instructions?: string | null;
    surfaces: Partial<Record<PinnedSurface, SurfaceApproval>>;
    instructionsApproved?: { drift: InstructionsDrift; approved: boolean };
  } = { pin: {}, set: {}, remove: [], surfaces: {} };
  for (const surface of PIN_SURFACES) {
    const explanation = explained[surface.section];
    if (explanation === undefined) continue;
    const names =
      typeof selection === 'object'
        ? surface.section === 'prompts'
          ? selection.prompts
          : selection.templates
        : undefined;
    const mode: Mode =
      selection === 'all' ? { all: true } : selection === 'low' ? { low: true } : { names: names ?? [] };
    const planned = planOne(surface, current, observed, explanation, mode, update);
    if ('message' in planned) return planned;
    update.surfaces[surface.section] = { explanation, approved: planned.approved };
  }
  const drift = explained.instructions;
  if (drift !== undefined && !drift.equal) {
    const approved =
      selection === 'all' || (typeof selection === 'object' && selection.instructions === true);
    update.instructionsApproved = { drift, approved };
    if (approved) {
      update.pin.instructions = drift.observed;
      update.instructions = observed.instructions ?? null;
    }
  } else if (typeof selection === 'object' && selection.instructions === true) {
    return { message: '--instructions: the live instructions match the pin (or the pin does not pin them)' };
  }
  return update;
}

function planOne(
  surface: PinSurface,
  current: Side,
  observed: CatalogPin,
  explanation: DriftExplanation,
  mode: Mode,
  update: {
    pin: { -readonly [K in PinnedSurface]?: PinConfig[K] };
    set: Record<string, Record<string, unknown>>;
    remove: string[];
  },
): { approved: ToolDrift[] } | { message: string } {
  const pinned = current.pin[surface.section];
  const seen = observed.pin[surface.section];
  if (pinned === undefined || seen === undefined) return { approved: [] };
  const before = current[surface.definitions];
  const after = observed[surface.definitions] ?? {};
  if ('all' in mode) {
    // A pin written before the per-item map (its overflow entry among the items) is rewritten whole.
    if (pinned.catalog !== seen.catalog || pinned.overflow !== seen.overflow)
      update.pin[surface.section] = seen;
    for (const [key, definition] of Object.entries(after))
      if (!sameJsonValue(before[key], definition)) update.set[key] = definition;
    for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) update.remove.push(key);
    return { approved: [...explanation.drift] };
  }
  const chosen =
    'low' in mode
      ? explanation.drift.filter((entry) => entry.severity === 'low')
      : selectByName(surface, explanation, mode.names);
  if ('message' in chosen) return chosen;
  if (chosen.length === 0) return { approved: [] };
  if (Object.hasOwn(pinned.items, surface.overflowKey))
    return {
      message: `the pin holds ${surface.overflowKey} in place of its ${surface.items} beyond 500 (written before each was pinned): approve the ${surface.items} whole once`,
    };
  const next: Record<string, string> = { ...pinned.items };
  const keys = new Set(
    chosen.flatMap((entry) => (entry.from === undefined ? [entry.key] : [entry.from.key, entry.key])),
  );
  for (const key of keys) {
    const digest = Object.hasOwn(seen.items, key) ? seen.items[key] : undefined;
    if (digest === undefined) delete next[key];
    else next[key] = digest;
    const definition = Object.hasOwn(after, key) ? after[key] : undefined;
    if (definition !== undefined) update.set[key] = definition;
    else if (Object.hasOwn(before, key)) update.remove.push(key);
  }
  const fold = foldPinnedItems(next, { profile: surface.label, overflowKey: surface.overflowKey });
  update.pin[surface.section] = { ...fold, items: next };
  return { approved: chosen };
}
