import { encodeToolKey } from '@toolpin/digest';
import type { CatalogView } from './catalogView.js';
import type { CallDecision, DenyData, DenyReason } from './decision.js';
import { judgeTool } from './inspectToolsPage.js';
import type { PinView } from './pinView.js';

const MESSAGES: Record<DenyReason, string> = {
  tool_drifted: 'the definition this session was served differs from the pinned one',
  tool_not_pinned: 'this tool is not in the pin',
  wrong_subject: "the server's catalog shares no tool with the pin: it is not the pinned server",
  unverifiable: 'the gateway could not verify the definition this session was served',
  catalog_unavailable: "the gateway could not obtain this session's tool catalog from the upstream",
  arguments_invalid: "the call's arguments do not fit the pinned inputSchema",
  output_invalid: "the result's structuredContent does not fit the pinned outputSchema",
};

/** A refusal for `reason` (a flag instead in monitor mode). */
export function refuse(
  pin: PinView,
  reason: DenyReason,
  data: Omit<DenyData, 'reason' | 'server'>,
): CallDecision {
  const full: DenyData = { reason, server: pin.name, ...data };
  if (pin.mode === 'monitor') return { kind: 'allow', flagged: full };
  return { kind: 'deny', message: `toolpin blocked the call: ${MESSAGES[reason]}`, data: full };
}

/**
 * Decides one tools/call from the catalog the session was served (after a refetch when needed).
 * Allowed only when the definition seen under that name has exactly the pinned digest.
 */
export function decideCall(pin: PinView, catalog: CatalogView | undefined, toolName: string): CallDecision {
  const key = encodeToolKey(toolName);
  const pinned = pin.pin.tools[key] ?? null;
  const subject = { tool: toolName, key, pinned };
  if (catalog === undefined || !catalog.usable)
    return refuse(pin, 'catalog_unavailable', { ...subject, observed: null });
  if (catalog.wrongSubject) return refuse(pin, 'wrong_subject', { ...subject, observed: null });
  const tool = catalog.tools.get(toolName);
  if (tool === undefined) {
    return refuse(pin, pinned === null ? 'tool_not_pinned' : 'unverifiable', { ...subject, observed: null });
  }
  const observed = tool.digest ?? null;
  const verdict = judgeTool(pin, tool);
  if (verdict === 'added') return refuse(pin, 'tool_not_pinned', { ...subject, observed });
  if (verdict === 'changed') return refuse(pin, 'tool_drifted', { ...subject, observed });
  if (verdict === 'unverifiable') return refuse(pin, 'unverifiable', { ...subject, observed });
  if (pin.onDrift === 'block-server' && catalog.drifted)
    return refuse(pin, 'tool_drifted', { ...subject, observed });
  return { kind: 'allow' };
}
