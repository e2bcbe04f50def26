import { restrictTool } from '@toolpin/digest';
import { explainDefinitionChange } from '../explain/explainDrift.js';
import type { ToolDigester } from '../state/toolDigester.js';
import type { ToolObservation } from '../state/toolObservation.js';
import type { ToolVerdict } from './decision.js';
import type { DriftFinding } from './driftFinding.js';
import type { PinView } from './pinView.js';

/** The outcome of inspecting one page of a tools/list result. */
export interface PageInspection {
  /** The definitions the client may see: in enforce mode only verified ones, in monitor mode all. */
  readonly kept: unknown[];
  /** Every definition on the page, verified or not, in page order. */
  readonly observed: ToolObservation[];
  /** Findings for the drift event (changed, added, unverifiable). */
  readonly findings: DriftFinding[];
}

/** How one observed tool stands against the server's pin. */
export function judgeTool(pin: PinView, tool: ToolObservation): ToolVerdict {
  if (tool.digest === undefined) return 'unverifiable';
  const pinned = pin.pin.tools[tool.key];
  if (pinned === undefined) return 'added';
  return pinned === tool.digest ? 'verified' : 'changed';
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
  const change = explainDefinitionChange(
    pinnedDefinition,
    restrictTool(definition as Record<string, unknown>),
  );
  return {
    members: change.members,
    paths: change.paths,
    ...(change.text.length > 0 ? { text: change.text } : {}),
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

/** Digests one page of tools, judges each against the pin, and filters it in enforce mode. */
export function inspectToolsPage(
  pin: PinView,
  tools: readonly unknown[],
  digester: ToolDigester,
): PageInspection {
  const observed = markAmbiguousNames(tools.map((tool) => digester.observe(tool, pin.profile)));
  const kept: unknown[] = [];
  const findings: DriftFinding[] = [];
  observed.forEach((tool, index) => {
    const verdict = judgeTool(pin, tool);
    if (verdict === 'verified' || pin.mode === 'monitor') kept.push(tools[index]);
    if (verdict !== 'verified') findings.push(findingFor(pin, tool, verdict, tools[index]));
  });
  return { kept, observed, findings };
}
