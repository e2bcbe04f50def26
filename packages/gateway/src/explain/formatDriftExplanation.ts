import { escapeInvisible } from './escapeInvisible.js';
import type { DriftExplanation, ToolDrift } from './explainDrift.js';

function label(tool: string | null, key: string): string {
  return tool === null ? escapeInvisible(key) : `${escapeInvisible(tool)} (${escapeInvisible(key)})`;
}

function formatTool(entry: ToolDrift): string[] {
  const lines: string[] = [];
  if (entry.kind === 'renamed' && entry.from !== undefined) {
    lines.push(`renamed  ${label(entry.from.tool, entry.from.key)} -> ${label(entry.tool, entry.key)}`);
  } else {
    lines.push(`${entry.kind.padEnd(8)} ${label(entry.tool, entry.key)}`);
  }
  if (entry.kind === 'changed') {
    if (entry.members === undefined) {
      lines.push('  the pin holds no definition of this tool: re-pin with definitions to see what changed');
    } else {
      lines.push(`  members: ${entry.members.join(', ')}`);
      lines.push(`  paths:   ${(entry.paths ?? []).join(' ')}`);
    }
  }
  for (const change of entry.text ?? []) lines.push(`  ${change.path}: ${change.diff}`);
  if (entry.kind === 'changed' || entry.kind === 'renamed') {
    lines.push(`  digest:  ${entry.pinned ?? '-'} -> ${entry.observed ?? '-'}`);
  } else {
    lines.push(`  digest:  ${entry.pinned ?? entry.observed ?? '-'}`);
  }
  return lines;
}

function countOf(explanation: DriftExplanation, kind: ToolDrift['kind']): number {
  return explanation.drift.filter((entry) => entry.kind === kind).length;
}

/**
 * The explanation as text for people (CLI output, review before approve): one summary line, then
 * per tool its kind, name and key, changed members and paths, word diffs and digests. Names and
 * texts from the server are shown with invisible characters escaped.
 */
export function formatDriftExplanation(explanation: DriftExplanation): string {
  const counts = (['changed', 'renamed', 'added', 'removed'] as const)
    .map((kind) => `${countOf(explanation, kind)} ${kind}`)
    .join(', ');
  const lines = [
    explanation.equal
      ? `no drift: ${explanation.unchanged} tools match the pin`
      : `drift: ${counts}, ${explanation.unchanged} unchanged`,
  ];
  if (explanation.wrongSubject) {
    lines.push('wrong subject: no observed tool is pinned; this is not the pinned server');
  }
  for (const entry of explanation.drift) lines.push(...formatTool(entry));
  return lines.join('\n') + '\n';
}
