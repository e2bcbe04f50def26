import { driftActionFor } from '../config/driftPolicy.js';
import type { DriftSeverity } from '../explain/driftSeverity.js';
import type { CatalogView } from './catalogView.js';
import type { ToolObservation } from './toolObservation.js';
import type { CallDecision, DenyData, DenyReason } from './decision.js';
import { judgeTool } from './inspectToolsPage.js';
import { recordedMembers, recordedMembersMatch } from './pinnedMembers.js';
import type { PinView } from './pinView.js';
import { SURFACES, type SurfaceSpec } from './pinSurface.js';
import { refusalMessage, type RefusalContext } from './refusalMessage.js';

/** A refusal for `reason` (a flag instead in monitor mode); its sentence: policy/refusalMessage.ts. */
export function refuse(
  pin: PinView,
  reason: DenyReason,
  data: Omit<DenyData, 'reason' | 'server'>,
  context?: RefusalContext,
): CallDecision {
  const full: DenyData = { reason, server: pin.name, ...data };
  if (pin.mode === 'monitor') return { kind: 'allow', flagged: full };
  return { kind: 'deny', message: refusalMessage(pin, full, context), data: full };
}

// Low only as judged against these very digests, with the members pinned by value as recorded
// (a change to them is high): a reloaded pin or a new listing is judged again.
function driftSeverityOf(pin: PinView, catalog: CatalogView, tool: ToolObservation): DriftSeverity {
  const judged = catalog.lowDrift.get(tool.key);
  const low =
    judged !== undefined &&
    judged === `${pin.pin.tools[tool.key] ?? ''} ${tool.digest ?? ''}` &&
    recordedMembersMatch(recordedMembers(pin, tool.key), tool.extras);
  return low ? 'low' : 'high';
}

// onDrift: block-server blocks every tool while the listing has drift of a severity it names.
function blocksServer(pin: PinView, catalog: CatalogView): boolean {
  if (!catalog.drifted) return false;
  const severities = catalog.driftSeverities.size > 0 ? [...catalog.driftSeverities] : (['high'] as const);
  return severities.some((severity) => driftActionFor(pin.onDrift, severity) === 'block-server');
}

function membersOf(catalog: CatalogView, key: string): RefusalContext {
  const members = catalog.changedMembers?.get(key);
  return members === undefined ? {} : { members };
}

/**
 * Decides one tools/call (or, with `spec`, one prompts/get or completion/complete: the same rules
 * over the session's prompts or resource templates and the pinned ones) from the catalog the session was served (after a refetch when
 * needed). Allowed only when the definition seen under that name has exactly the pinned digest,
 * or (flagged) when its drift is low and `onDrift.low` is `flag`.
 */
export function decideCall(
  pin: PinView,
  catalog: CatalogView | undefined,
  name: string,
  spec: SurfaceSpec = SURFACES.tools,
): CallDecision {
  const { drifted, notPinned } = spec.use;
  const key = spec.encodeKey(name);
  const pinned = pin.pin.tools[key] ?? null;
  const subject =
    spec.surface === 'tools'
      ? { tool: name, key, pinned }
      : spec.surface === 'prompts'
        ? { tool: null, prompt: name, key, pinned }
        : { tool: null, template: name, key, pinned };
  if (catalog === undefined || !catalog.usable)
    return refuse(pin, 'catalog_unavailable', { ...subject, observed: null });
  if (catalog.wrongSubject) return refuse(pin, 'wrong_subject', { ...subject, observed: null });
  const tool = catalog.tools.get(name);
  if (tool === undefined) {
    return refuse(pin, pinned === null ? notPinned : 'unverifiable', { ...subject, observed: null });
  }
  const observed = tool.digest ?? null;
  const verdict = judgeTool(pin, tool);
  if (verdict === 'added') return refuse(pin, notPinned, { ...subject, observed });
  if (verdict === 'changed') {
    const severity = driftSeverityOf(pin, catalog, tool);
    const data = { ...subject, observed, severity };
    if (severity === 'low' && driftActionFor(pin.onDrift, 'low') === 'flag' && !blocksServer(pin, catalog))
      return { kind: 'allow', flagged: { reason: drifted, server: pin.name, ...data } };
    return refuse(pin, drifted, data, membersOf(catalog, tool.key));
  }
  if (verdict === 'unverifiable') return refuse(pin, 'unverifiable', { ...subject, observed });
  if (blocksServer(pin, catalog))
    return refuse(pin, drifted, { ...subject, observed }, { serverBlocked: true });
  return { kind: 'allow' };
}
