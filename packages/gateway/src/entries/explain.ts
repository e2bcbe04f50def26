// @toolpin/gateway/explain: drift explained, for front ends other than the CLI (pure functions).

/** Per tool: the changed members, JSON Pointer paths, word diffs of texts, and renames. */
export { explainDrift, explainDefinitionChange } from '../explain/explainDrift.js';
/** The explanation's shapes, and one side of the comparison (a pin's or a live catalog's). */
export type {
  DriftExplanation,
  ToolDrift,
  ToolDriftKind,
  DefinitionChange,
  TextChange,
  ExplainSide,
} from '../explain/explainDrift.js';
/** A tool served with members its pin does not record (stripped by the gateway, recorded by approve). */
export type { UnpinnedMembers } from '../explain/explainExtraMembers.js';
/** The explanation as text for people (what `toolpin check` prints). */
export { formatDriftExplanation } from '../explain/formatDriftExplanation.js';
