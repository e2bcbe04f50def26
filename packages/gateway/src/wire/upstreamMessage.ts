import { ErrorCodes } from './errorCodes.js';
import { jsonValueProblem, MAX_JSON_DEPTH } from './jsonDepth.js';
import { jsonRpcError, messageProblem, type JsonRpcId, type JsonRpcResponse } from './jsonRpc.js';

/**
 * Why an upstream message cannot be verified (error.data.reason of the -32042 it turns into), or
 * (`unsolicited`) why an answer is not one: no request of its exchange awaits it (a second answer
 * under an answered id, or a result nothing asked for). An unsolicited answer answers nothing.
 */
export type InvalidReason = 'invalid_message' | 'too_deep' | 'unsolicited';

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
 * The messages of one JSON value a bridged upstream sent (a stdio line, an SSE event): a non-empty
 * array is a batch, each member a message of its own (one level: an array inside it is an invalid
 * message), as the HTTP proxy reads a batch answer; anything else is one message.
 */
export function upstreamBatch(value: unknown): readonly unknown[] {
  return Array.isArray(value) && value.length > 0 ? value : [value];
}

/**
 * Checks one JSON value an upstream sent on any path (an HTTP answer, a stdio child, an HTTP+SSE stream) before
 * anything else reads it: it must be a JSON-RPC 2.0 message by the envelope rules of
 * `messageProblem` (a response has exactly one of result and error, an error object with an integer
 * code…), nest no deeper than MAX_JSON_DEPTH, so that no recursive code (digest, serialization,
 * the SDK's schemas) meets a value that could exhaust the stack, and hold no number that does not
 * survive a round trip (`1e400` would be relayed as `null`, a value the gateway did not judge: the
 * message is invalid, never changed). Undefined when it is fine.
 */
export function checkUpstreamMessage(value: unknown): InvalidUpstreamMessage | undefined {
  const problem = messageProblem(value);
  if (problem !== undefined) return { reason: 'invalid_message', problem, id: idOf(value) };
  const found = jsonValueProblem(value);
  if (found?.kind === 'too_deep')
    return { reason: 'too_deep', problem: `nested deeper than ${MAX_JSON_DEPTH} levels`, id: idOf(value) };
  if (found !== undefined)
    return {
      reason: 'invalid_message',
      problem: 'a number out of range (it would be relayed as null)',
      id: idOf(value),
    };
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

/** What {@link decideUpstreamText} made of one upstream text. */
export type UpstreamTextDecision =
  | {
      readonly ok: true;
      /** The text was a JSON array (a batch of messages). */
      readonly batch: boolean;
      /** What takes the messages' place, in order (a message `decide` returned undefined for is left out). */
      readonly out: unknown[];
    }
  | { readonly ok: false; readonly reason: 'malformed'; readonly problem: string };

/** What {@link decideUpstreamText} does with each message of a text. */
export interface UpstreamMessageHandlers {
  /** A message that passed checkUpstreamMessage: returns what goes in its place (itself, a replacement, or undefined). */
  valid(message: unknown, batch: boolean): unknown;
  /** A message that failed it: returns what goes in its place (its request's -32042, or undefined). */
  invalid(invalid: InvalidUpstreamMessage): unknown;
}

/**
 * Decides one upstream text (a JSON body, the data of one SSE event) the same way on every path
 * that reads one whole (the HTTP proxy's checkpoint, the bridged Streamable HTTP client's checkedFetch):
 * parsed once as JSON (a text that is not JSON is `malformed`), then every message in it (one
 * value, or each member of a batch) checked with {@link checkUpstreamMessage} and handed to the
 * handler for what it is.
 */
export function decideUpstreamText(text: string, handlers: UpstreamMessageHandlers): UpstreamTextDecision {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Never the parser's own message: it quotes the text around the error (a tool's result).
    return { ok: false, reason: 'malformed', problem: `not JSON (${text.length} characters)` };
  }
  const batch = Array.isArray(value);
  const out: unknown[] = [];
  for (const message of batch ? (value as unknown[]) : [value]) {
    const invalid = checkUpstreamMessage(message);
    const decided = invalid === undefined ? handlers.valid(message, batch) : handlers.invalid(invalid);
    if (decided !== undefined) out.push(decided);
  }
  return { ok: true, batch, out };
}
