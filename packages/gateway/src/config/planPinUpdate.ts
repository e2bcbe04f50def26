import { canonicalizeJson, encodeToolKey, type RestrictedTool } from '@toolpin/digest';
import { explainDrift, type DriftExplanation, type ToolDrift } from '../explain/explainDrift.js';
import type { CatalogPin } from './pinFromCatalog.js';
import type { PinDocumentUpdate } from './updatePinDocument.js';
import type { ServerConfig } from './types.js';
import { catalogOfFoldedTools } from './verifyPin.js';

/** A planned approval: the rewrite, what it approves, and the whole explanation it was made from. */
export interface PinUpdatePlan extends PinDocumentUpdate {
  readonly explanation: DriftExplanation;
  /** The drift entries this update approves (all of them, or those of the named tools). */
  readonly approved: readonly ToolDrift[];
}

/** The outcome of {@link planPinUpdate}: a plan, or why the request cannot be planned. */
export type PinUpdatePlanResult =
  { readonly ok: true; readonly plan: PinUpdatePlan } | { readonly ok: false; readonly message: string };

const OVERFLOW_KEY = 'tools:overflow';

function sameDefinition(a: RestrictedTool | undefined, b: RestrictedTool | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  try {
    return canonicalizeJson(a) === canonicalizeJson(b);
  } catch {
    return false;
  }
}

function selectEntries(
  explanation: DriftExplanation,
  names: readonly string[],
): { entries: ToolDrift[] } | { message: string } {
  const entries = new Set<ToolDrift>();
  for (const name of names) {
    const key = encodeToolKey(name);
    const matches = explanation.drift.filter((entry) => entry.key === key || entry.from?.key === key);
    if (matches.length === 0)
      return { message: `--tool ${JSON.stringify(name)}: the live catalog shows no drift for this tool` };
    for (const entry of matches) entries.add(entry);
  }
  return { entries: [...entries] };
}

/**
 * Plans the approval of an observed catalog against a server's current pin: with no `tools`, the
 * pin becomes the observed catalog; with tool names, only their entries change (a rename moves
 * both keys). The new catalog digest is the fold of the resulting tool digests.
 */
export function planPinUpdate(
  current: ServerConfig,
  observed: CatalogPin,
  tools?: readonly string[],
): PinUpdatePlanResult {
  const explanation = explainDrift(
    { tools: { ...current.pin.tools }, definitions: { ...current.definitions } },
    { tools: { ...observed.pin.tools }, definitions: observed.definitions },
  );
  if (tools === undefined || tools.length === 0) {
    const set: Record<string, RestrictedTool> = {};
    for (const [key, definition] of Object.entries(observed.definitions)) {
      if (!sameDefinition(current.definitions[key], definition)) set[key] = definition;
    }
    const remove = Object.keys(current.definitions).filter(
      (key) => !Object.hasOwn(observed.definitions, key),
    );
    const plan = {
      pin: observed.pin,
      definitions: { set, remove },
      explanation,
      approved: explanation.drift,
    };
    return { ok: true, plan };
  }
  if (Object.hasOwn(current.pin.tools, OVERFLOW_KEY) || Object.hasOwn(observed.pin.tools, OVERFLOW_KEY)) {
    return {
      ok: false,
      message:
        'catalogs of more than 500 tools fold into tools:overflow and can only be approved whole (without --tool)',
    };
  }
  const selected = selectEntries(explanation, tools);
  if ('message' in selected) return { ok: false, message: selected.message };
  const next: Record<string, string> = { ...current.pin.tools };
  const set: Record<string, RestrictedTool> = {};
  const remove: string[] = [];
  const keys = selected.entries.flatMap((entry) =>
    entry.from === undefined ? [entry.key] : [entry.from.key, entry.key],
  );
  for (const key of keys) {
    const digest = observed.pin.tools[key];
    const definition = observed.definitions[key];
    if (digest === undefined) delete next[key];
    else next[key] = digest;
    if (definition !== undefined) set[key] = definition;
    else if (Object.hasOwn(current.definitions, key)) remove.push(key);
  }
  const pin = { catalog: catalogOfFoldedTools(next), tools: next };
  return { ok: true, plan: { pin, definitions: { set, remove }, explanation, approved: selected.entries } };
}
