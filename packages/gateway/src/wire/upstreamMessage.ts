import { ErrorCodes } from './errorCodes.js';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from './jsonDepth.js';
import { jsonRpcError, messageProblem, type JsonRpcId, type JsonRpcResponse } from './jsonRpc.js';

/** Why an upstream message cannot be verified (error.data.reason of the -32042 it turns into). */
export type InvalidReason = 'invalid_message' | 'too_deep';

/** An upstream message the gateway refuses to act on. */
export interface InvalidUpstreamMessage {
  readonly reason: InvalidReason;
  /** What is wrong, in the gateway's words (never the message's content). */
  readonly problem: string;
  /** The id it carries, when it carries a usable one: the pending request it would answer. */
  readonly id: JsonRpcId | undefined;
}

function idOf(value: unknown): JsonRpcId | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * Checks one JSON value an upstream sent on any path (an HTTP answer, a stdio child, an HTTP+SSE stream) before
 * anything else reads it: it must be a JSON-RPC 2.0 message by the envelope rules of
 * `messageProblem` (a response has exactly one of result and error, an error object with an integer
 * code…) and nest no deeper than MAX_JSON_DEPTH, so that no recursive code (digest, serialization,
 * the SDK's schemas) meets a value that could exhaust the stack. Undefined when it is fine.
 */
export function checkUpstreamMessage(value: unknown): InvalidUpstreamMessage | undefined {
  const problem = messageProblem(value);
  if (problem !== undefined) return { reason: 'invalid_message', problem, id: idOf(value) };
  if (exceedsJsonDepth(value))
    return { reason: 'too_deep', problem: `nested deeper than ${MAX_JSON_DEPTH} levels`, id: idOf(value) };
  return undefined;
}

/** The -32042 error a client request gets in place of an upstream answer the gateway dropped. */
export function unverifiableAnswer(
  id: JsonRpcId,
  invalid: InvalidUpstreamMessage,
  server: string,
): JsonRpcResponse {
  return jsonRpcError(
    id,
    ErrorCodes.UPSTREAM_INVALID,
    `toolpin: the upstream's answer is not valid JSON-RPC (${invalid.problem})`,
    { reason: invalid.reason, server },
  );
}
