import { driftActionFor } from '../config/driftPolicy.js';
import { judgeDriftSeverity } from '../explain/driftSeverity.js';
import { explainDefinitionChange, joinChanges } from '../explain/explainDrift.js';
import { explainExtraMembers, type UnpinnedMembers } from '../explain/explainExtraMembers.js';
import type { ToolVerdict } from './decision.js';
import { findingIdentity, type DriftFinding } from './driftFinding.js';
import { clientDefinition, recordedMembers, recordedMembersMatch } from './pinnedMembers.js';
import type { PinView } from './pinView.js';
import { SURFACES, type SurfaceSpec } from './pinSurface.js';
import type { ToolObservation } from './toolObservation.js';
import type { ToolObserver } from './toolObserver.js';

/** The outcome of inspecting one page of a tools/list result. */
export interface PageInspection {
  /**
   * The definitions the client may see: in enforce mode only verified ones, each with only the
   * members its pin covers; in monitor mode all, as served.
   */
  readonly kept: unknown[];
  /** Every definition on the page, verified or not, in page order. */
  readonly observed: ToolObservation[];
  /** Findings for the drift event (changed, added, unverifiable), one per distinct definition. */
  readonly findings: DriftFinding[];
  /** Verified tools served with members the pin does not record: stripped in enforce mode, passed in monitor mode. */
  readonly unpinned: UnpinnedMembers[];
  /** Keys of the changed tools whose drift is low (judged against this pin): `onDrift.low: flag` serves and allows them. */
  readonly lowDrift: string[];
}

/**
 * How one observed tool stands against the server's pin: verified only when its digest is the
 * pinned one and every member the pin records by value is served unchanged.
 */
export function judgeTool(pin: PinView, tool: ToolObservation): ToolVerdict {
  if (tool.digest === undefined) return 'unverifiable';
  const pinned = pin.pin.tools[tool.key];
  if (pinned === undefined) return 'added';
  if (pinned !== tool.digest) return 'changed';
  return recordedMembersMatch(recordedMembers(pin, tool.key), tool.extras) ? 'verified' : 'changed';
}

/**
 * Two definitions under one name are ambiguous: a client would use one of them and the gateway
 * cannot know which, so unless both are identical, neither is verified (fail closed).
 */
function markAmbiguousNames(observed: ToolObservation[]): ToolObservation[] {
  const byKey = new Map<string, ToolObservation>();
  const ambiguous = new Set<string>();
  for (const tool of observed) {
    const first = byKey.get(tool.key);
    if (first === undefined) byKey.set(tool.key, tool);
    else if (first.digest === undefined || first.digest !== tool.digest) ambiguous.add(tool.key);
  }
  if (ambiguous.size === 0) return observed;
  return observed.map((tool) =>
    ambiguous.has(tool.key)
      ? { name: tool.name, key: tool.key, problem: 'two different definitions share this name' }
      : tool,
  );
}

/** The explanation options of a surface: its hashed members (a tool's by default). */
function members(spec: SurfaceSpec): { members?: readonly string[] } {
  return spec.members === undefined ? {} : { members: spec.members };
}

function explainChange(
  pin: PinView,
  tool: ToolObservation,
  definition: unknown,
  spec: SurfaceSpec,
): Pick<DriftFinding, 'members' | 'paths' | 'text' | 'severity' | 'severities'> {
  const pinnedDefinition = pin.definitions[tool.key];
  // Nothing to compare with: the drift cannot be shown harmless.
  if (pinnedDefinition === undefined || tool.digest === undefined) return { severity: 'high' };
  const observed = spec.restrict(definition as Record<string, unknown>) as typeof pinnedDefinition;
  const hashed =
    pin.pin.tools[tool.key] === tool.digest
      ? { members: [], paths: [], text: [] }
      : explainDefinitionChange(pinnedDefinition, observed, members(spec));
  const recorded = recordedMembers(pin, tool.key);
  const extras = recorded === undefined ? undefined : explainExtraMembers(recorded, tool.extras);
  const change = joinChanges(hashed, extras);
  const paths = change.paths ?? [];
  const judgment = judgeDriftSeverity(pinnedDefinition, observed, paths, spec.members);
  return {
    members: change.members ?? [],
    paths,
    ...(change.text !== undefined && change.text.length > 0 ? { text: change.text } : {}),
    severity: judgment.severity,
    severities: judgment.severities,
  };
}

function findingFor(
  pin: PinView,
  tool: ToolObservation,
  verdict: ToolVerdict,
  definition: unknown,
  spec: SurfaceSpec,
): DriftFinding {
  const pinned = pin.pin.tools[tool.key] ?? null;
  const base = { key: tool.key, tool: tool.name ?? null, pinned, observed: tool.digest ?? null };
  if (verdict === 'changed')
    return { kind: 'changed', ...base, ...explainChange(pin, tool, definition, spec) };
  if (verdict === 'added') return { kind: 'added', ...base, severity: 'high' };
  return { kind: 'unverifiable', ...base, severity: 'high', problem: tool.problem ?? 'no digest' };
}

/**
 * Digests one page of tools (or, with `spec`, of another listed surface's items, under that
 * surface's pin: see policy/pinSurface.ts), judges each against the pin, and filters it in enforce mode: a
 * verified tool is sent with only the members its pin covers (the six hashed ones and those
 * recorded by value); any other member is stripped and reported in `unpinned`. A changed tool whose
 * drift is low is served the same way (as served, stripped) when `onDrift.low` is `flag`, and still
 * reported in `findings`.
 */
export function inspectToolsPage(
  pin: PinView,
  tools: readonly unknown[],
  observer: ToolObserver,
  spec: SurfaceSpec = SURFACES.tools,
): PageInspection {
  const observed = markAmbiguousNames(
    tools.map((tool) =>
      spec.surface === 'tools'
        ? observer.observe(tool, pin.profile)
        : observer.observe(tool, pin.profile, spec),
    ),
  );
  const kept: unknown[] = [];
  const findings: DriftFinding[] = [];
  const reported = new Map<string, DriftFinding>();
  const unpinned: UnpinnedMembers[] = [];
  const lowDrift: string[] = [];
  observed.forEach((tool, index) => {
    const definition = tools[index];
    const verdict = judgeTool(pin, tool);
    if (verdict !== 'verified') {
      // Identical copies share a digest (so they are not ambiguous): one finding, one explanation.
      const identity = findingIdentity({
        kind: verdict,
        key: tool.key,
        observed: tool.digest ?? null,
        ...(verdict === 'unverifiable' ? { problem: tool.problem ?? 'no digest' } : {}),
      });
      let finding = reported.get(identity);
      if (finding === undefined) {
        finding = findingFor(pin, tool, verdict, definition, spec);
        reported.set(identity, finding);
        findings.push(finding);
      }
      const low = finding.kind === 'changed' && finding.severity === 'low';
      if (low) lowDrift.push(tool.key);
      if (!low || driftActionFor(pin.onDrift, 'low') !== 'flag') {
        if (pin.mode === 'monitor') kept.push(definition);
        return;
      }
    }
    // A verified prompt or template reaches the client with its hashed members only (what the
    // digest verified), however it was served; in monitor mode as served.
    if (spec.surface !== 'tools') {
      kept.push(pin.mode === 'monitor' ? definition : spec.restrict(definition as Record<string, unknown>));
      return;
    }
    // A verified tool, or a low drift served flagged, has a digest, so it is an object. A low
    // drift's recorded members are served unchanged (a change to them is high).
    const stripped: string[] = [];
    const sent = clientDefinition(
      definition as Record<string, unknown>,
      recordedMembers(pin, tool.key),
      stripped,
    );
    kept.push(pin.mode === 'monitor' ? definition : sent);
    if (stripped.length > 0)
      unpinned.push({ key: tool.key, tool: tool.name ?? null, members: stripped.sort() });
  });
  return { kept, observed, findings, unpinned, lowDrift };
}
