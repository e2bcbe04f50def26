import type { CatalogDiff } from '@toolpin/digest';
import type { CatalogSideResult } from './readCatalogSide.js';

/** The readable report of `toolpin diff`: sides, verdict, then each changed, added and removed tool. */
export function formatDiff(
  diff: CatalogDiff,
  pinned: CatalogSideResult,
  observed: CatalogSideResult,
): string {
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
    lines.push(`  pinned    ${change.pinned}`, `  observed  ${change.observed}`);
  }
  for (const { key, digest } of diff.added) lines.push(`added     ${key}  ${digest}`);
  for (const { key, digest } of diff.removed) lines.push(`removed   ${key}  ${digest}`);
  const counts = [diff.changed, diff.added, diff.removed, diff.unchanged].map((list) => list.length);
  lines.push(`drift: ${counts[0]} changed, ${counts[1]} added, ${counts[2]} removed, ${counts[3]} unchanged`);
  return lines.join('\n') + '\n';
}
