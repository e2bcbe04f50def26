import type { CatalogDiff } from '@toolpin/digest';
import type { DriftExplanation } from '../explain/explainDrift.js';
import type { CatalogSideResult } from './readCatalogSide.js';

/** The readable report of `toolpin diff`: sides, verdict, then each changed, added and removed tool. */
export function formatDiff(
  diff: CatalogDiff,
  pinned: CatalogSideResult,
  observed: CatalogSideResult,
  explanation?: DriftExplanation,
): string {
  // A removed and an added key that differ only by name are one rename, shown once.
  const renames = explanation?.drift.filter((entry) => entry.kind === 'renamed') ?? [];
  const renamed = new Set(renames.flatMap((entry) => [entry.key, entry.from?.key ?? '']));
  const added = diff.added.filter(({ key }) => !renamed.has(key));
  const removed = diff.removed.filter(({ key }) => !renamed.has(key));
  const lines = [`pinned    ${pinned.catalog}`, `observed  ${observed.catalog}`];
  if (diff.equal) {
    lines.push(`equal: ${diff.unchanged.length} tools, profile ${pinned.profile}`);
    return lines.join('\n') + '\n';
  }
  if (diff.wrongSubject) {
    lines.push(
      `wrong subject: none of the ${diff.added.length} observed tools is pinned; this is another server's catalog`,
    );
  }
  for (const change of diff.changed) {
    lines.push(`changed   ${change.key}${change.name === undefined ? '' : ` (${change.name})`}`);
    if (change.members !== undefined) lines.push(`  members   ${change.members.join(', ')}`);
    if (change.paths !== undefined) lines.push(`  paths     ${change.paths.join(', ')}`);
    const text =
      explanation?.drift.find((entry) => entry.kind === 'changed' && entry.key === change.key)?.text ?? [];
    for (const { path, diff: words } of text) lines.push(`  text      ${path}: ${words}`);
    lines.push(`  pinned    ${change.pinned}`, `  observed  ${change.observed}`);
  }
  for (const entry of renames)
    lines.push(`renamed   ${entry.from?.key ?? '?'} -> ${entry.key} (identical but for the name)`);
  for (const { key, digest } of added) lines.push(`added     ${key}  ${digest}`);
  for (const { key, digest } of removed) lines.push(`removed   ${key}  ${digest}`);
  const counts = [diff.changed, added, removed, diff.unchanged].map((list) => list.length);
  const renamedCount = renames.length === 0 ? '' : `${renames.length} renamed, `;
  lines.push(
    `drift: ${counts[0]} changed, ${renamedCount}${counts[1]} added, ${counts[2]} removed, ${counts[3]} unchanged`,
  );
  return lines.join('\n') + '\n';
}
