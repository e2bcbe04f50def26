import type { DriftAction, DriftPolicy, OnDriftSetting } from './types.js';

/** The severities a drift finding can have (explain/driftSeverity). */
export type PolicySeverity = keyof DriftPolicy;

/** `onDrift` as one action per severity: a single value (`filter`, `block-server`) means both. */
export function driftPolicyOf(onDrift: OnDriftSetting): DriftPolicy {
  return typeof onDrift === 'string' ? { high: onDrift, low: onDrift } : onDrift;
}

/** What enforce mode does with a drift of this severity. */
export function driftActionFor(onDrift: OnDriftSetting, severity: PolicySeverity): DriftAction {
  return driftPolicyOf(onDrift)[severity];
}
