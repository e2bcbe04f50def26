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
/** One operation of a text change's word diff (`TextChange.ops`): what a renderer reads instead of the markers. */
export type { WordDiffOp } from '../explain/wordDiff.js';
/** Drift severity (docs/drift-severity.md): each changed path of a drifted definition judged high or low, with its rule. */
export { judgeDriftSeverity } from '../explain/driftSeverity.js';
export type {
  DriftSeverity,
  PathSeverity,
  SeverityRule,
  SeverityJudgment,
} from '../explain/driftSeverity.js';
/** A tool served with members its pin does not record (stripped by the gateway, recorded by approve). */
export type { UnpinnedMembers } from '../explain/explainExtraMembers.js';
/** The explanation as text for people (what `toolpin check` prints). */
export { formatDriftExplanation } from '../explain/formatDriftExplanation.js';
