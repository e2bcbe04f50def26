import { sessionLabel } from '../observe/sessionLabel.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError, type JsonRpcId, type JsonRpcResponse } from '../wire/jsonRpc.js';
import type { CallDecision } from '../policy/decision.js';
import type { CatalogRefresh, ServerGuard } from './serverGuard.js';

/**
 * Decides one tools/call with the server's guard and emits its call.blocked / call.flagged alert:
 * the one call screening of every front (the HTTP proxy, the bridge, the SDK-forwarding fronts).
 * Returns the JSON-RPC error to answer the client with, or undefined when the call may go upstream.
 * An allowed call's arguments fit the tool's pinned inputSchema; its result is expected, to be
 * checked against the pinned outputSchema when it comes back (see ServerGuard.expectResult). Most
 * calls are decided at once from the session's catalog (no promise); the others list the upstream
 * first with `refresh` (fetch on miss).
 */
export function screenCall(
  guard: ServerGuard,
  sessionKey: string,
  id: JsonRpcId,
  params: unknown,
  refresh: CatalogRefresh,
): JsonRpcResponse | undefined | Promise<JsonRpcResponse | undefined> {
  const name =
    typeof params === 'object' && params !== null ? (params as { name?: unknown }).name : undefined;
  if (typeof name !== 'string')
    return jsonRpcError(id, ErrorCodes.INVALID_PARAMS, 'Invalid params: tools/call needs a tool name');
  const args = (params as { arguments?: unknown }).arguments;
  const known = guard.decideKnownCall(sessionKey, name, args);
  if (known !== undefined) return answerDecision(guard, sessionKey, id, name, known);
  return guard
    .decideCall(sessionKey, name, refresh, args)
    .then((decision) => answerDecision(guard, sessionKey, id, name, decision));
}

/** Emits a decided call's alert; the refusal to answer, or undefined when the call may go upstream. */
function answerDecision(
  guard: ServerGuard,
  sessionKey: string,
  id: JsonRpcId,
  name: string,
  decision: CallDecision,
): JsonRpcResponse | undefined {
  const session = sessionLabel(sessionKey);
  if (decision.kind === 'allow') {
    guard.expectResult(sessionKey, id, name);
    if (decision.flagged !== undefined)
      guard.alerts.emit({
        event: 'call.flagged',
        server: guard.config.name,
        session,
        id,
        decision: decision.flagged,
      });
    else guard.alerts.telemetry.onCallAllowed(guard.config.name);
    return undefined;
  }
  guard.alerts.emit({
    event: 'call.blocked',
    server: guard.config.name,
    session,
    id,
    decision: decision.data,
  });
  return jsonRpcError(id, ErrorCodes.PIN_POLICY_BLOCKED, decision.message, decision.data);
}
