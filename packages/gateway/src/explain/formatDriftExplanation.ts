import { escapeInvisible } from './escapeInvisible.js';
import type { DriftExplanation, ToolDrift } from './explainDrift.js';

function label(tool: string | null, key: string): string {
  return tool === null ? escapeInvisible(key) : `${escapeInvisible(tool)} (${escapeInvisible(key)})`;
}

/** What the entries of an explanation are, for its text: `tool`/`tools` unless told. */
export interface FormatDriftOptions {
  /** @default 'tool' */
  readonly item?: string;
  /** @default 'tools' */
  readonly items?: string;
}

function formatTool(entry: ToolDrift, item: string): string[] {
  const lines: string[] = [];
  if (entry.kind === 'renamed' && entry.from !== undefined) {
    lines.push(
      `renamed  ${label(entry.from.tool, entry.from.key)} -> ${label(entry.tool, entry.key)}  [${entry.severity}]`,
    );
  } else {
    lines.push(`${entry.kind.padEnd(8)} ${label(entry.tool, entry.key)}  [${entry.severity}]`);
  }
  if (entry.kind === 'changed') {
    if (entry.members === undefined) {
      lines.push(
        `  the pin holds no definition of this ${item}: re-pin with definitions to see what changed`,
      );
    } else {
      // Members pinned by value are named by the server: escaped like every served text.
      lines.push(`  members: ${entry.members.map(escapeInvisible).join(', ')}`);
      lines.push(`  paths:   ${(entry.paths ?? []).map(escapeInvisible).join(' ')}`);
      for (const { path, severity, rule } of entry.severities ?? [])
        lines.push(`  ${severity.padEnd(4)}     ${escapeInvisible(path)} (${rule})`);
    }
  }
  for (const change of entry.text ?? []) lines.push(`  ${escapeInvisible(change.path)}: ${change.diff}`);
  if (entry.kind === 'changed' && entry.pinned !== null && entry.pinned === entry.observed) {
    lines.push(`  digest:  ${entry.pinned} (unchanged: a member pinned by value differs)`);
  } else if (entry.kind === 'changed' || entry.kind === 'renamed') {
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
 * per tool (prompt, template: `options`) its kind, name, key and severity, changed members and paths (each path's severity and
 * rule), word diffs and digests; then the
 * served members the pin does not record. Names and texts from the server are shown with invisible
 * characters escaped.
 */
export function formatDriftExplanation(
  explanation: DriftExplanation,
  options: FormatDriftOptions = {},
): string {
  const { item = 'tool', items = 'tools' } = options;
  const counts = (['changed', 'renamed', 'added', 'removed'] as const)
    .map((kind) => `${countOf(explanation, kind)} ${kind}`)
    .join(', ');
  const high = explanation.drift.filter((entry) => entry.severity === 'high').length;
  const severities = `severity: ${high} high, ${explanation.drift.length - high} low`;
  const lines = [
    explanation.equal
      ? `no drift: ${explanation.unchanged} ${items} match the pin`
      : `drift: ${counts}, ${explanation.unchanged} unchanged (${severities})`,
  ];
  if (explanation.wrongSubject) {
    lines.push(`wrong subject: no observed ${item} is pinned; this is not the pinned server`);
  }
  for (const entry of explanation.drift) lines.push(...formatTool(entry, item));
  for (const { key, tool, members } of explanation.unpinned) {
    const names = members.map(escapeInvisible).join(', ');
    lines.push(`not pinned ${label(tool, key)}: ${names} (the gateway strips them; approve to pin them)`);
  }
  return lines.join('\n') + '\n';
}
