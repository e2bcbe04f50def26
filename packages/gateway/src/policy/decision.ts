import type { DriftSeverity } from '../explain/driftSeverity.js';
import type { SchemaProblem, ValidationBound } from './schemaProblems.js';

/** Why the gateway refused a call (stable, documented; `error.data.reason` on the wire). */
export type DenyReason =
  | 'tool_drifted'
  | 'tool_not_pinned'
  | 'prompt_drifted'
  | 'prompt_not_pinned'
  | 'template_drifted'
  | 'template_not_pinned'
  | 'wrong_subject'
  | 'unverifiable'
  | 'catalog_unavailable'
  | 'arguments_invalid'
  | 'output_invalid'
  | 'not_in_scope';

/** The structured part of a refusal: what was pinned, what the session observed. */
export interface DenyData {
  readonly reason: DenyReason;
  readonly server: string;
  /** The tool called; null for a request that names no tool (a prompts/get names `prompt`). */
  readonly tool: string | null;
  /** For `prompt_drifted`, `prompt_not_pinned` and the general reasons of a prompts/get: the prompt asked for. */
  readonly prompt?: string;
  /**
   * For `template_drifted`, `template_not_pinned` and the general reasons of a completion/complete
   * naming a resource template (`ref/resource`): its uriTemplate.
   */
  readonly template?: string;
  readonly key: string | null;
  readonly pinned: string | null;
  readonly observed: string | null;
  /** For `tool_drifted`: the severity of the drift (docs/drift-severity.md). */
  readonly severity?: DriftSeverity;
  /** `arguments_invalid`, `output_invalid`: where the value does not fit the pinned schema (never the value). */
  readonly problems?: readonly SchemaProblem[];
  /** `not_in_scope`: the principal the request speaks for; null when no principal matched it (docs/scopes.md). */
  readonly principal?: string | null;
  /** `unverifiable` of a value not validated: the budget it would exceed (docs/boundary.md#validation-bounds). */
  readonly bound?: ValidationBound;
}

/** The policy's answer for one tools/call, prompts/get or completion/complete: a value, never an exception. */
export type CallDecision =
  | { readonly kind: 'allow'; readonly flagged?: DenyData }
  | { readonly kind: 'deny'; readonly message: string; readonly data: DenyData };

/** How one observed tool stands against the pin. */
export type ToolVerdict = 'verified' | 'changed' | 'added' | 'unverifiable';
