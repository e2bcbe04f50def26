import type { CatalogDiff, ToolChange } from '@toolpin/digest';
import type { DriftExplanation, ToolDrift } from '../explain/explainDrift.js';

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
