import type { TextChange } from '../explain/explainDrift.js';

/** Kinds of finding in a `catalog.drift` event. */
export type DriftKind = 'changed' | 'added' | 'removed' | 'wrong_subject' | 'unverifiable';

/** One entry of a `catalog.drift` event: a tool whose observed state differs from the pin. */
export interface DriftFinding {
  readonly kind: DriftKind;
  readonly key: string;
  readonly tool: string | null;
  readonly pinned: string | null;
  readonly observed: string | null;
  /**
   * For `changed`, when the pin file holds the pinned definition: which members differ, hashed ones
   * first, then members pinned by value (`_meta`, `icons`…), whose change is drift under an equal digest.
   */
  readonly members?: readonly string[];
  /** For `changed`: RFC 6901 pointers of the differing values. */
  readonly paths?: readonly string[];
  /** For `changed`: word diffs of the changed texts (description, title, annotations.title, schema texts). */
  readonly text?: readonly TextChange[];
  /** For `unverifiable`: why no digest could be computed. */
  readonly problem?: string;
}

/**
 * What makes findings one: the same kind, key and observed digest (or problem). Copies of one
 * definition in a listing are reported, and explained, once.
 */
export function findingIdentity(
  finding: Pick<DriftFinding, 'kind' | 'key' | 'observed' | 'problem'>,
): string {
  return JSON.stringify([finding.kind, finding.key, finding.observed, finding.problem ?? null]);
}
