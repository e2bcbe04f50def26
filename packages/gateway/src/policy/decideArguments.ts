import { encodeToolKey } from '@toolpin/digest';
import type { CallDecision } from './decision.js';
import { refuse } from './decideCall.js';
import type { PinView } from './pinView.js';
import type { SchemaCheck } from './schemaProblems.js';

/**
 * Decides a call the pin allows from how its arguments fit the pinned `inputSchema`: a misfit is
 * `arguments_invalid`, a pinned schema that cannot be compiled is `unverifiable` (both flagged
 * instead in monitor mode); nothing to check against allows the call.
 */
export function decideArguments(pin: PinView, toolName: string, check: SchemaCheck): CallDecision {
  if (check.kind === 'fits' || check.kind === 'unchecked') return { kind: 'allow' };
  const key = encodeToolKey(toolName);
  const digest = pin.pin.tools[key] ?? null;
  const subject = { tool: toolName, key, pinned: digest, observed: digest };
  if (check.kind === 'uncompilable') return refuse(pin, 'unverifiable', subject);
  // Not validated: it would have cost more than its budget (docs/boundary.md#validation-bounds).
  if (check.kind === 'over_budget') return refuse(pin, 'unverifiable', { ...subject, bound: check.bound });
  return refuse(pin, 'arguments_invalid', { ...subject, problems: check.problems });
}

/**
 * Decides a result from how its `structuredContent` fits the pinned `outputSchema`: undefined
 * when it fits (or nothing is checked), else `output_invalid` (`unverifiable` when it was too
 * large to check within its budget), a flag unless the pin says `onBadOutput: block` in enforce mode.
 */
export function decideOutput(pin: PinView, toolName: string, check: SchemaCheck): CallDecision | undefined {
  if (check.kind !== 'misfit' && check.kind !== 'over_budget') return undefined;
  const key = encodeToolKey(toolName);
  const digest = pin.pin.tools[key] ?? null;
  const subject = { tool: toolName, key, pinned: digest, observed: digest };
  const decision =
    check.kind === 'misfit'
      ? refuse(pin, 'output_invalid', { ...subject, problems: check.problems })
      : refuse(pin, 'unverifiable', { ...subject, bound: check.bound }, { result: true });
  if (decision.kind === 'deny' && pin.onBadOutput !== 'block')
    return { kind: 'allow', flagged: decision.data };
  return decision;
}
