import { sessionLabel } from '../observe/sessionLabel.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError, type JsonRpcId, type JsonRpcResponse } from '../wire/jsonRpc.js';
import type { CatalogRefresh, ServerGuard } from './serverGuard.js';

/**
 * Decides one tools/call with the server's guard and emits its call.blocked / call.flagged alert.
 * Returns the JSON-RPC error to answer the client with, or undefined when the call may go upstream.
 * An allowed call's arguments fit the tool's pinned inputSchema; its result is expected, to be
 * checked against the pinned outputSchema when it comes back (see ServerGuard.expectResult).
 * (The same steps as the HTTP proxy's, for the transports that see whole messages.)
 */
export async function screenCall(
  guard: ServerGuard,
  sessionKey: string,
  id: JsonRpcId,
  params: unknown,
  refresh: CatalogRefresh,
): Promise<JsonRpcResponse | undefined> {
  const name =
    typeof params === 'object' && params !== null ? (params as { name?: unknown }).name : undefined;
  if (typeof name !== 'string')
    return jsonRpcError(id, ErrorCodes.INVALID_PARAMS, 'Invalid params: tools/call needs a tool name');
  const args = (params as { arguments?: unknown }).arguments;
  const decision = await guard.decideCall(sessionKey, name, refresh, args);
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
