import type { CatalogDiff, ToolChange } from '@toolpin/digest';
import { escapeInvisible } from '../explain/escapeInvisible.js';
import type { DriftExplanation, ToolDrift } from '../explain/explainDrift.js';
import type { CatalogSideResult } from './readCatalogSide.js';

/** A changed tool of `toolpin diff`: members pinned by value are named beside the hashed ones; its severity (docs/drift-severity.md). */
export type MemberChange = Omit<ToolChange, 'members'> & {
  members?: string[];
  severity: ToolDrift['severity'];
  severities?: ToolDrift['severities'];
};

/** The digest diff of `toolpin diff` with the changes of members pinned by value. */
export type MembersDiff = Omit<CatalogDiff, 'changed'> & { changed: MemberChange[] };

/**
 * The digest diff with the explanation's verdict: a tool whose digest is unchanged but whose
 * members pinned by value differ is `changed`, not `unchanged`, and the sides are not `equal`.
 */
export function diffWithMembers(diff: CatalogDiff, explanation: DriftExplanation): MembersDiff {
  const changed: MemberChange[] = explanation.drift
    .filter((entry) => entry.kind === 'changed')
    .map((entry) => ({
      key: entry.key,
      ...(entry.tool === null ? {} : { name: entry.tool }),
      pinned: entry.pinned ?? '',
      observed: entry.observed ?? '',
      ...(entry.members === undefined ? {} : { members: [...entry.members] }),
      ...(entry.paths === undefined ? {} : { paths: [...entry.paths] }),
      severity: entry.severity,
      ...(entry.severities === undefined ? {} : { severities: entry.severities }),
    }));
  const changedKeys = new Set(changed.map((change) => change.key));
  const unchanged = diff.unchanged.filter((key) => !changedKeys.has(key));
  return { ...diff, equal: explanation.equal, changed, unchanged };
}

function changedLines(entry: ToolDrift): string[] {
  const name = entry.tool === null ? '' : ` (${escapeInvisible(entry.tool)})`;
  const lines = [`changed   ${escapeInvisible(entry.key)}${name}`];
  if (entry.members !== undefined) lines.push(`  members   ${entry.members.map(escapeInvisible).join(', ')}`);
  if (entry.paths !== undefined) lines.push(`  paths     ${entry.paths.map(escapeInvisible).join(', ')}`);
  lines.push(`  severity  ${entry.severity}`);
  for (const { path, severity, rule } of entry.severities ?? [])
    lines.push(`    ${severity.padEnd(4)}    ${escapeInvisible(path)} (${rule})`);
  for (const { path, diff: words } of entry.text ?? [])
    lines.push(`  text      ${escapeInvisible(path)}: ${words}`);
  lines.push(`  pinned    ${entry.pinned ?? '-'}`, `  observed  ${entry.observed ?? '-'}`);
  return lines;
}

/** The readable report of `toolpin diff`: sides, verdict, then each changed, added and removed tool. */
export function formatDiff(
  diff: MembersDiff,
  pinned: CatalogSideResult,
  observed: CatalogSideResult,
  explanation: DriftExplanation,
): string {
  // A removed and an added key that differ only by name are one rename, shown once.
  const renames = explanation.drift.filter((entry) => entry.kind === 'renamed');
  const renamed = new Set(renames.flatMap((entry) => [entry.key, entry.from?.key ?? '']));
  const added = diff.added.filter(({ key }) => !renamed.has(key));
  const removed = diff.removed.filter(({ key }) => !renamed.has(key));
  const changed = explanation.drift.filter((entry) => entry.kind === 'changed');
  const lines = [`pinned    ${pinned.catalog}`, `observed  ${observed.catalog}`];
  const notPinned = explanation.unpinned.map(
    ({ key, members }) =>
      `not pinned ${key}: ${members.map(escapeInvisible).join(', ')} (the gateway strips them)`,
  );
  if (explanation.equal) {
    lines.push(`equal: ${explanation.unchanged} tools, profile ${pinned.profile}`, ...notPinned);
    return lines.join('\n') + '\n';
  }
  if (diff.wrongSubject) {
    lines.push(
      `wrong subject: none of the ${diff.added.length} observed tools is pinned; this is another server's catalog`,
    );
  }
  for (const entry of changed) lines.push(...changedLines(entry));
  for (const entry of renames)
    lines.push(`renamed   ${entry.from?.key ?? '?'} -> ${entry.key} (identical but for the name)`);
  for (const { key, digest } of added) lines.push(`added     ${key}  ${digest}`);
  for (const { key, digest } of removed) lines.push(`removed   ${key}  ${digest}`);
  lines.push(...notPinned);
  const counts = [changed, added, removed].map((list) => list.length);
  const renamedCount = renames.length === 0 ? '' : `${renames.length} renamed, `;
  lines.push(
    `drift: ${counts[0]} changed, ${renamedCount}${counts[1]} added, ${counts[2]} removed, ${explanation.unchanged} unchanged`,
  );
  return lines.join('\n') + '\n';
}
