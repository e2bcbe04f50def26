/** How much a drift matters: `high` when it may change what the model is told or allowed to send, `low` when proven not to. */
export type DriftSeverity = 'high' | 'low';

/**
 * The rule that judged one changed path (docs/drift-severity.md has the table). High: `text`,
 * `property-added`, `schema-widened`, `schema-unproven`, `annotation-less-risk`,
 * `annotation-unproven`, `pinned-by-value`, `unexplained`. Low: `schema-narrowed`,
 * `annotation-more-risk`, `equivalent`.
 */
export type SeverityRule =
  | 'text'
  | 'property-added'
  | 'schema-widened'
  | 'schema-unproven'
  | 'annotation-less-risk'
  | 'annotation-unproven'
  | 'pinned-by-value'
  | 'unexplained'
  | 'schema-narrowed'
  | 'annotation-more-risk'
  | 'equivalent';

/** The severity of one changed path (RFC 6901 pointer) of a drifted definition, and the rule that set it. */
export interface PathSeverity {
  readonly path: string;
  readonly severity: DriftSeverity;
  readonly rule: SeverityRule;
}

/** The highest of some severities (`low` for none). */
export function highestSeverity(severities: Iterable<DriftSeverity>): DriftSeverity {
  for (const severity of severities) if (severity === 'high') return 'high';
  return 'low';
}
