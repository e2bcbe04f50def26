import { sessionLabel } from '../observe/sessionLabel.js';
import { traceDecision } from '../observe/tracing.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonValueProblem } from '../wire/jsonDepth.js';
import { jsonRpcError, outOfRangeRefusal, type JsonRpcId, type JsonRpcResponse } from '../wire/jsonRpc.js';
import type { CallDecision } from '../policy/decision.js';
import { READ_METHOD, SURFACES, useOfRequest, type SurfaceSpec } from '../policy/pinSurface.js';
import { isObject } from '../wire/isObject.js';
import type { AnswerBook } from '../state/answerBook.js';
import type { CatalogRefresh, ServerCheckpoint } from './serverCheckpoint.js';

/**
 * True for the requests the checkpoint screens before they go upstream: tools/call; prompts/get
 * when the pin pins prompts; completion/complete when the pin pins the surface its `params.ref`
 * names (a prompt, a resource template), and, when it names neither, when the pin pins either;
 * and, while principals are configured, every request that uses an item (its scope is checked).
 * Every front asks this, then {@link screenCall}.
 */
export function isScreened(checkpoint: ServerCheckpoint, method: string, params: unknown): boolean {
  if (method === READ_METHOD) return checkpoint.scoped();
  const use = useOfRequest(method, params);
  if (use === undefined) return false;
  if (use.lookalike === true) return true;
  if (checkpoint.scoped()) return true;
  if (use.malformed === true)
    return checkpoint.screens(SURFACES.prompts) || checkpoint.screens(SURFACES.resourceTemplates);
  return checkpoint.screens(use.spec);
}

/**
 * Decides one tools/call (or prompts/get, completion/complete: `method`) with the server's checkpoint and emits its
 * call.blocked / call.flagged alert: the one screening of every front (the HTTP proxy, the bridge,
 * the SDK-forwarding fronts). Returns the JSON-RPC error to answer the client with, or undefined
 * when the request may go upstream. An allowed call's arguments fit the tool's pinned inputSchema;
 * its result is expected, to be checked against the pinned outputSchema when it comes back (see
 * ServerCheckpoint.expectResult), in the session's book or the sessionless exchange's (`book`).
 * Most requests are decided at once from the session's catalog (no promise); the others list the
 * upstream first with `refresh` (fetch on miss).
 */
export function screenCall(
  checkpoint: ServerCheckpoint,
  sessionKey: string,
  id: JsonRpcId,
  params: unknown,
  refresh: CatalogRefresh,
  method = 'tools/call',
  book?: AnswerBook,
): JsonRpcResponse | undefined | Promise<JsonRpcResponse | undefined> {
  if (method === READ_METHOD) return screenRead(checkpoint, sessionKey, id, params, book);
  const use = useOfRequest(method, params) ?? { spec: SURFACES.tools, name: undefined };
  const { spec, name } = use;
  if (use.lookalike === true) return refuseLookalike(checkpoint, id, method, spec);
  if (use.malformed === true)
    return jsonRpcError(
      id,
      ErrorCodes.INVALID_PARAMS,
      `Invalid params: ${method} needs params.ref naming a prompt (ref/prompt) or a resource template (ref/resource)`,
    );
  if (typeof name !== 'string')
    return jsonRpcError(id, ErrorCodes.INVALID_PARAMS, `Invalid params: ${method} needs a ${spec.item} name`);
  // Only a call's arguments are checked (against the tool's pinned inputSchema).
  const args = spec.surface === 'tools' ? (params as { arguments?: unknown }).arguments : undefined;
  // Every front refuses these as it parses; a message that reached here another way still never
  // has a value checked that is not the value sent (1e400 would be sent as null).
  const found = jsonValueProblem(args);
  if (found?.kind === 'non_finite') {
    const refusal = outOfRangeRefusal({ id, method, params }, `/params/arguments${found.pointer}`);
    return jsonRpcError(id, refusal.code, refusal.message, refusal.data);
  }
  const request = { id, name, spec, book };
  if (!checkpoint.screens(spec, sessionKey)) {
    // A surface the pin does not pin: only the principal's scope decides, and the answer passes as served.
    const outOfScope = checkpoint.decideScope(sessionKey, name, spec);
    if (outOfScope !== undefined) return answerDecision(checkpoint, sessionKey, request, outOfScope);
    checkpoint.expectAnswer(sessionKey, id, method, params, book);
    return undefined;
  }
  const known = checkpoint.decideKnownCall(sessionKey, name, args, spec);
  if (known !== undefined) return answerDecision(checkpoint, sessionKey, request, known);
  return checkpoint
    .decideCall(sessionKey, name, refresh, args, spec)
    .then((decision) => answerDecision(checkpoint, sessionKey, request, decision));
}

/**
 * A resources/read while principals are configured: refused (`not_in_scope`, naming the template)
 * when its URI matches a resource template out of the principal's scope that the session's
 * listings or the pin carry; else its answer is awaited as any request's and it goes upstream.
 */
function screenRead(
  checkpoint: ServerCheckpoint,
  sessionKey: string,
  id: JsonRpcId,
  params: unknown,
  book: AnswerBook | undefined,
): JsonRpcResponse | undefined {
  const uri = isObject(params) ? params.uri : undefined;
  if (typeof uri !== 'string')
    return jsonRpcError(
      id,
      ErrorCodes.INVALID_PARAMS,
      `Invalid params: ${READ_METHOD} needs a params.uri string`,
    );
  const refused = checkpoint.decideRead(sessionKey, uri);
  if (refused === undefined) {
    checkpoint.expectAnswer(sessionKey, id, READ_METHOD, params, book);
    return undefined;
  }
  const request = { id, name: refused.template, spec: SURFACES.resourceTemplates, book };
  return answerDecision(checkpoint, sessionKey, request, refused.decision);
}

/** The screened request a decision is about. */
interface ScreenedRequest {
  readonly id: JsonRpcId;
  readonly name: string;
  readonly spec: SurfaceSpec;
  readonly book: AnswerBook | undefined;
}

/** Emits a decided request's alert; the refusal to answer, or undefined when it may go upstream. */
function answerDecision(
  checkpoint: ServerCheckpoint,
  sessionKey: string,
  { id, name, spec, book }: ScreenedRequest,
  decision: CallDecision,
): JsonRpcResponse | undefined {
  // The session's label is hashed only for an alert (most calls are allowed without one).
  traceDecision(checkpoint.config.name, spec.surface, name, 'call', decision);
  if (decision.kind === 'allow') {
    // Its answer is awaited: a call's result checked, a prompt's taken as any result.
    if (spec.surface === 'tools') checkpoint.expectResult(sessionKey, id, name, book);
    else checkpoint.expectAnswer(sessionKey, id, spec.use?.method ?? '', undefined, book);
    if (decision.flagged !== undefined)
      checkpoint.alerts.emit({
        event: 'call.flagged',
        server: checkpoint.config.name,
        session: sessionLabel(sessionKey),
        id,
        decision: decision.flagged,
      });
    else checkpoint.alerts.telemetry.onCallAllowed(checkpoint.config.name, name);
    return undefined;
  }
  checkpoint.alerts.emit({
    event: 'call.blocked',
    server: checkpoint.config.name,
    session: sessionLabel(sessionKey),
    id,
    decision: decision.data,
  });
  return jsonRpcError(id, ErrorCodes.PIN_POLICY_BLOCKED, decision.message, decision.data);
}

/**
 * A method that differs from a screened one only by case, width or spacing: `-32601`, logged. An
 * upstream that read it as the screened method would run an item the gateway never screened.
 */
function refuseLookalike(
  checkpoint: ServerCheckpoint,
  id: JsonRpcId,
  method: string,
  spec: SurfaceSpec,
): JsonRpcResponse {
  const screened = spec.use.method ?? 'completion/complete';
  const message = `Method not found: toolpin refuses ${JSON.stringify(method)}, which reads as ${screened} but is not it`;
  checkpoint.logger.warn(
    {
      event: 'request.rejected',
      server: checkpoint.config.name,
      reason: 'method_lookalike',
      method,
      screened,
    },
    message,
  );
  return jsonRpcError(id, ErrorCodes.METHOD_NOT_FOUND, message, {
    reason: 'method_lookalike',
    server: checkpoint.config.name,
    method,
  });
}
