import { ErrorCodes } from './errorCodes.js';
import { jsonValueProblem, MAX_JSON_DEPTH } from './jsonDepth.js';
import { isObject } from './isObject.js';

/** A JSON-RPC 2.0 id: the spec allows strings and numbers (null only on parse errors). */
export type JsonRpcId = string | number | null;

/** A JSON-RPC request or notification as received (notifications have no `id`). */
export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id?: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

/** A JSON-RPC error object. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC response: exactly one of `result` or `error`. */
export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: JsonRpcErrorObject;
}

/** Any JSON-RPC message. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcResponse;

/** The parsed body of a POST: one message or a batch (2025-03-26 only). */
export interface JsonRpcBody {
  readonly batch: boolean;
  readonly messages: readonly JsonRpcMessage[];
}

/**
 * The result of parsing a POST body, as a value rather than an exception. A refusal carries the id
 * of the message it is about when that message is a request (null otherwise) and, for a number out
 * of range, its `data` (answer with `jsonRpcError(id, code, message, data)`); when the text was JSON,
 * the `requests` in it that could be answered by their ids (never the value: it holds arguments).
 */
export type ParseBodyResult =
  | { ok: true; body: JsonRpcBody }
  | {
      ok: false;
      code: number;
      message: string;
      id: JsonRpcId;
      data?: unknown;
      requests?: AnswerableRequests;
    };

/**
 * The requests a refused JSON value holds that can be answered by id ({@link answerableRequests}),
 * whether or not it is valid JSON-RPC: a stream of messages (wrap's stdin) answers each of them, as
 * nothing else would.
 */
export interface AnswerableRequests {
  /** The value was an array: its answer is one too. */
  readonly batch: boolean;
  /** Their usable ids, in order, each once. */
  readonly ids: readonly (string | number)[];
}

/** True for a request (has `method` and `id`). */
export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest & { id: JsonRpcId } {
  return 'method' in message && message.id !== undefined;
}

/**
 * True for a message that names a request method (anything outside `notifications/`) but carries
 * no id: a request sent as a notification. JSON-RPC servers may run it and answer nothing, so the
 * gateway could neither decide it as a request nor answer a refusal: it is never forwarded.
 */
export function isRequestWithoutId(message: JsonRpcMessage): message is JsonRpcRequest {
  return 'method' in message && message.id === undefined && !message.method.startsWith('notifications/');
}

/**
 * The id a refusal of `value` may be answered under, even when `value` is not valid JSON-RPC: a
 * request's (an object with `method` and neither `result` nor `error`) when it is a string or a
 * number within ±(2^53 − 1). Never a response's: its id is in the peer's id space, and an error
 * under it could be taken for the answer to the sender's own request of that id.
 */
export function requestIdOf(value: unknown): string | number | undefined {
  if (!isObject(value) || !('method' in value) || 'result' in value || 'error' in value) return undefined;
  const id = value.id;
  return typeof id === 'string' || (typeof id === 'number' && !unsafeId(id)) ? id : undefined;
}

/** The requests of a JSON value (one message, or each member of an array) that have a usable id. */
export function answerableRequests(value: unknown): AnswerableRequests {
  const batch = Array.isArray(value);
  const ids = new Map<string, string | number>();
  for (const member of batch ? (value as unknown[]) : [value]) {
    const id = requestIdOf(member);
    if (id !== undefined && !ids.has(idKey(id))) ids.set(idKey(id), id);
  }
  return { batch, ids: [...ids.values()] };
}

/** True for a response (has `result` or `error`, no `method`). */
export function isResponse(message: unknown): message is JsonRpcResponse {
  return isObject(message) && !('method' in message) && ('result' in message || 'error' in message);
}

/**
 * A numeric id beyond ±(2^53 − 1): JSON readers disagree on it (JavaScript reads 2^53 + 1 as 2^53,
 * Python and Go exactly), so two ids one side tells apart could be one to the other, and an answer
 * could be matched to the wrong request. Refused like an id of the wrong type.
 */
function unsafeId(id: unknown): boolean {
  return typeof id === 'number' && Math.abs(id) > Number.MAX_SAFE_INTEGER;
}

const UNSAFE_ID = 'a numeric id beyond 2^53 - 1, which JSON readers do not read alike';

/** Why a value is not a JSON-RPC 2.0 message, or undefined when it is one. */
export function messageProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'not a JSON object';
  if (value.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"';
  const id = value.id;
  if ('method' in value) {
    // A request or a notification: nothing of a response beside it.
    if (typeof value.method !== 'string') return 'method is not a string';
    if ('result' in value || 'error' in value) return 'a request carries result or error';
    if (value.params !== undefined && !isObject(value.params) && !Array.isArray(value.params))
      return 'params is neither an object nor an array';
    if ('id' in value && typeof id !== 'string' && typeof id !== 'number')
      return 'a request id is neither a string nor a number';
    if (unsafeId(id)) return UNSAFE_ID;
    return undefined;
  }
  // A response: exactly one of result and error (a present key counts, whatever its value).
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) return 'a response needs exactly one of result and error';
  if (!('id' in value) || (typeof id !== 'string' && typeof id !== 'number' && id !== null))
    return 'a response id is neither a string, a number nor null';
  if (unsafeId(id)) return UNSAFE_ID;
  if (hasResult && id === null) return 'a result answers no request (null id)';
  if (hasError) {
    const error = value.error;
    if (!isObject(error)) return 'error is not an object';
    if (typeof error.code !== 'number' || !Number.isInteger(error.code))
      return 'error.code is not an integer';
    if (typeof error.message !== 'string') return 'error.message is not a string';
  }
  return undefined;
}

/**
 * The first request id a batch uses twice. Answers are matched to requests by id: two requests of
 * one batch under one id could get each other's answer (an allowed call's result for a refused one).
 */
function reusedRequestId(messages: readonly JsonRpcMessage[]): JsonRpcId | undefined {
  const seen = new Set<string>();
  for (const message of messages) {
    if (!('method' in message) || message.id === undefined || message.id === null) continue;
    const key = idKey(message.id);
    if (seen.has(key)) return message.id;
    seen.add(key);
  }
  return undefined;
}

/**
 * The refusal of a message holding a number that does not survive a round trip (`1e400`): sent on,
 * it would reach the upstream as `null`, a value nobody decided on. In a tools/call's arguments it
 * is `arguments_invalid` with the pointer into the arguments (never the value), elsewhere
 * `number_out_of_range` with the pointer into the message.
 */
export function outOfRangeRefusal(
  message: unknown,
  pointer: string,
): { code: number; message: string; id: JsonRpcId; data: Record<string, unknown> } {
  const request = isObject(message) && 'method' in message ? message : undefined;
  const id =
    request !== undefined && (typeof request.id === 'string' || typeof request.id === 'number')
      ? request.id
      : null;
  const name = isObject(request?.params) ? request.params.name : undefined;
  const inArguments = request?.method === 'tools/call' && /^\/params\/arguments(\/|$)/.test(pointer);
  const text = 'Invalid Request: a number out of range (it would be sent as null)';
  if (!inArguments)
    return {
      code: ErrorCodes.INVALID_REQUEST,
      message: text,
      id,
      data: { reason: 'number_out_of_range', pointer },
    };
  return {
    code: ErrorCodes.INVALID_REQUEST,
    message: `${text} in the call's arguments`,
    id,
    data: {
      reason: 'arguments_invalid',
      tool: typeof name === 'string' ? name : null,
      problems: [{ pointer: pointer.slice('/params/arguments'.length), keyword: 'type' }],
    },
  };
}

function invalidRequest(message: string, value: unknown): ParseBodyResult {
  return {
    ok: false,
    code: ErrorCodes.INVALID_REQUEST,
    message: `Invalid Request: ${message}`,
    id: null,
    requests: answerableRequests(value),
  };
}

/**
 * Parses a POST body: malformed JSON is -32700; a value that is not JSON-RPC, nests too deep, holds
 * a number out of range or is a batch reusing an id is -32600.
 */
export function parseJsonRpcBody(text: string): ParseBodyResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Never the parser's own message: it quotes the text around the error (a tool's arguments).
    return {
      ok: false,
      code: ErrorCodes.PARSE_ERROR,
      message: `Parse error: the body is not valid JSON (${text.length} characters)`,
      id: null,
    };
  }
  const batch = Array.isArray(value);
  const messages: unknown[] = batch ? (value as unknown[]) : [value];
  if (messages.length === 0) return invalidRequest('empty batch', value);
  for (const message of messages) {
    const problem = messageProblem(message);
    if (problem !== undefined) return invalidRequest(`not a JSON-RPC 2.0 message (${problem})`, value);
  }
  for (const message of messages) {
    // The batch's array is one level of the body's depth.
    const problem = jsonValueProblem(message, batch ? MAX_JSON_DEPTH - 1 : MAX_JSON_DEPTH);
    if (problem?.kind === 'too_deep')
      return invalidRequest(`nested deeper than ${MAX_JSON_DEPTH} levels`, value);
    if (problem !== undefined)
      return {
        ok: false,
        ...outOfRangeRefusal(message, problem.pointer),
        requests: answerableRequests(value),
      };
  }
  const reused = batch ? reusedRequestId(messages as JsonRpcMessage[]) : undefined;
  if (reused !== undefined)
    return invalidRequest(`id ${JSON.stringify(reused)} used twice in one batch`, value);
  return { ok: true, body: { batch, messages: messages as JsonRpcMessage[] } };
}

/**
 * The message with exactly the members JSON-RPC defines for its kind (a response: jsonrpc, id and
 * one of result and error; a request or notification: jsonrpc, id when present, method, params
 * when present): what the gateway validated is all a client may read. A member beside them (a
 * decoy the gateway would not judge and a lenient client might read) never leaves the gateway.
 */
export function ownEnvelope(message: JsonRpcMessage): JsonRpcMessage {
  const members = 'method' in message ? REQUEST_MEMBERS : 'error' in message ? ERROR_MEMBERS : RESULT_MEMBERS;
  const out: Record<string, unknown> = {};
  // In the order the message has them: a known listing's bytes and its re-serialization agree.
  for (const key of Object.keys(message)) {
    if (!members.has(key)) continue;
    const value = (message as unknown as Record<string, unknown>)[key];
    out[key] = key === 'error' ? ownErrorObject(value as JsonRpcErrorObject) : value;
  }
  return out as unknown as JsonRpcMessage;
}

const REQUEST_MEMBERS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const RESULT_MEMBERS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'result']);
const ERROR_MEMBERS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'error']);

/** An error object with its three members only (messageProblem checked code and message). */
function ownErrorObject({ code, message, data }: JsonRpcErrorObject): JsonRpcErrorObject {
  return data === undefined ? { code, message } : { code, message, data };
}

/** Builds a JSON-RPC error response. */
export function jsonRpcError(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse {
  const error: JsonRpcErrorObject = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: '2.0', id, error };
}

/** A stable map key for an id: 1 and "1" are different ids. */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'string' ? `s:${id}` : `n:${String(id)}`;
}
