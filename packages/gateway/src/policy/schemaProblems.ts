/**
 * One place where a value does not fit a pinned schema: a JSON pointer into the checked value
 * (RFC 6901) and the JSON Schema keyword that failed. Never the value itself, nor a validator's
 * message (those quote values: `must be equal to constant "…"`).
 */
export interface SchemaProblem {
  readonly pointer: string;
  readonly keyword: string;
}

/** At most this many problems are reported for one value (the first found). */
export const MAX_SCHEMA_PROBLEMS = 16;

/** Pointers longer than this are cut (a deep or long-keyed value must not make the log grow). */
export const MAX_POINTER_LENGTH = 256;

/** What a validator reports for one failure (Ajv's ErrorObject has these members). */
export interface ValidatorFinding {
  readonly instancePath: string;
  readonly keyword: string;
  readonly params?: Record<string, unknown>;
}

/**
 * Which validation budget a value would exceed (docs/boundary.md#validation-bounds): `bytes`, its
 * JSON size; `unique_items`, the pairs of array items `uniqueItems` would compare; `evaluations`,
 * the applications of the schema's subschemas to the value (a recursive schema's branches).
 */
export type ValidationBound = 'bytes' | 'unique_items' | 'evaluations';

/** The result of checking a value against a pinned schema. */
export type SchemaCheck =
  | { readonly kind: 'fits' }
  | { readonly kind: 'misfit'; readonly problems: readonly SchemaProblem[] }
  /** The pinned schema cannot be compiled (invalid, remote `$ref`, unknown `$schema`). */
  | { readonly kind: 'uncompilable'; readonly problem: string }
  /** Validating the value would exceed its budget: it was not validated. */
  | { readonly kind: 'over_budget'; readonly bound: ValidationBound }
  /** Nothing to check against: no pinned definition, no such schema, or `validate: false`. */
  | { readonly kind: 'unchecked'; readonly why: 'no_definition' | 'no_schema' | 'opted_out' };

function escapeSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function bounded(pointer: string): string {
  return pointer.length <= MAX_POINTER_LENGTH ? pointer : `${pointer.slice(0, MAX_POINTER_LENGTH)}…`;
}

/**
 * The problems of a failed validation: pointers and keywords only. A missing required property is
 * pointed at by its name (a name from the pinned schema, not from the value).
 */
export function problemsFromFindings(findings: readonly ValidatorFinding[]): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  for (const finding of findings) {
    if (problems.length >= MAX_SCHEMA_PROBLEMS) break;
    const missing = finding.keyword === 'required' ? finding.params?.missingProperty : undefined;
    const pointer =
      typeof missing === 'string'
        ? `${finding.instancePath}/${escapeSegment(missing)}`
        : finding.instancePath;
    problems.push({ pointer: bounded(pointer), keyword: finding.keyword });
  }
  return problems;
}
