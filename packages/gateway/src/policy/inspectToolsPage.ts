import { restrictTool } from '@toolpin/digest';
import { explainDefinitionChange, joinChanges } from '../explain/explainDrift.js';
import { explainExtraMembers, type UnpinnedMembers } from '../explain/explainExtraMembers.js';
import type { ToolVerdict } from './decision.js';
import { findingIdentity, type DriftFinding } from './driftFinding.js';
import { clientDefinition, recordedMembers, recordedMembersMatch } from './pinnedMembers.js';
import type { PinView } from './pinView.js';
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

function explainChange(
  pin: PinView,
  tool: ToolObservation,
  definition: unknown,
): Pick<DriftFinding, 'members' | 'paths' | 'text'> {
  const pinnedDefinition = pin.definitions[tool.key];
  if (pinnedDefinition === undefined || tool.digest === undefined) return {};
  const hashed =
    pin.pin.tools[tool.key] === tool.digest
      ? { members: [], paths: [], text: [] }
      : explainDefinitionChange(pinnedDefinition, restrictTool(definition as Record<string, unknown>));
  const recorded = recordedMembers(pin, tool.key);
  const extras = recorded === undefined ? undefined : explainExtraMembers(recorded, tool.extras);
  const change = joinChanges(hashed, extras);
  return {
    members: change.members ?? [],
    paths: change.paths ?? [],
    ...(change.text !== undefined && change.text.length > 0 ? { text: change.text } : {}),
  };
}

function findingFor(
  pin: PinView,
  tool: ToolObservation,
  verdict: ToolVerdict,
  definition: unknown,
): DriftFinding {
  const pinned = pin.pin.tools[tool.key] ?? null;
  const base = { key: tool.key, tool: tool.name ?? null, pinned, observed: tool.digest ?? null };
  if (verdict === 'changed') return { kind: 'changed', ...base, ...explainChange(pin, tool, definition) };
  if (verdict === 'added') return { kind: 'added', ...base };
  return { kind: 'unverifiable', ...base, problem: tool.problem ?? 'no digest' };
}

/**
 * Digests one page of tools, judges each against the pin, and filters it in enforce mode: a
 * verified tool is sent with only the members its pin covers (the six hashed ones and those
 * recorded by value); any other member is stripped and reported in `unpinned`.
 */
export function inspectToolsPage(
  pin: PinView,
  tools: readonly unknown[],
  observer: ToolObserver,
): PageInspection {
  const observed = markAmbiguousNames(tools.map((tool) => observer.observe(tool, pin.profile)));
  const kept: unknown[] = [];
  const findings: DriftFinding[] = [];
  const reported = new Set<string>();
  const unpinned: UnpinnedMembers[] = [];
  observed.forEach((tool, index) => {
    const definition = tools[index];
    const verdict = judgeTool(pin, tool);
    if (verdict !== 'verified') {
      if (pin.mode === 'monitor') kept.push(definition);
      // Identical copies share a digest (so they are not ambiguous): one finding, one explanation.
      const identity = findingIdentity({
        kind: verdict,
        key: tool.key,
        observed: tool.digest ?? null,
        ...(verdict === 'unverifiable' ? { problem: tool.problem ?? 'no digest' } : {}),
      });
      if (reported.has(identity)) return;
      reported.add(identity);
      findings.push(findingFor(pin, tool, verdict, definition));
      return;
    }
    // A verified tool has a digest, so it is an object.
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
  return { kept, observed, findings, unpinned };
}
