import type { ServerCheckpoint } from '../checkpoint/serverCheckpoint.js';
import type { TracedRequest } from '../observe/tracing.js';
import type { AnswerBook } from '../state/answerBook.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError, type JsonRpcId, type JsonRpcResponse } from '../wire/jsonRpc.js';

/** What the gateway knows of one HTTP exchange while it is proxied. */
export interface Exchange {
  readonly checkpoint: ServerCheckpoint;
  /** Whose catalog the inspected results belong to (see sessionKeyOf). */
  readonly sessionKey: string;
  /**
   * The body sent upstream: the gateway's serialization of the messages it decided to forward (a
   * string: node writes a string body with the request head in one write).
   */
  readonly body: string | undefined;
  /**
   * The requests of a sessionless exchange awaiting their answer: its answers are matched here, on
   * this response only, whatever ids other callers use. Absent: the session's book (any stream of it).
   */
  readonly answers?: AnswerBook;
  /** Ids of the requests forwarded, so each gets an error if the upstream fails them. */
  readonly requestIds: readonly JsonRpcId[];
  /**
   * Those of them that are 2026-07-28 `subscriptions/listen` requests (absent: none). Their stream
   * carries notifications for as long as it lasts and owes them nothing: it may stay quiet, and one
   * that ends without their result (sent on a graceful close only) is a disconnect, not a request
   * left unanswered.
   */
  readonly listening?: readonly JsonRpcId[];
  /** Errors for refused members of a batch, merged into the upstream's answer. */
  readonly refused: readonly JsonRpcResponse[];
  /** The client sent a batch: a JSON answer is an array. */
  readonly batch: boolean;
  /**
   * The `Mcp-Param-*` headers sent upstream, each checked against the argument it mirrors and
   * written by the gateway (wire/paramHeaders.ts); the client's own are never forwarded.
   */
  readonly paramHeaders?: Readonly<Record<string, string>>;
  /**
   * The span of the (first) request forwarded, when tracing is on: its traceparent goes upstream
   * in place of the client's.
   */
  readonly trace?: TracedRequest;
}

/** Why the gateway answers a forwarded request itself: the `error.data.reason` of its error. */
export type UpstreamFailureReason =
  | 'unreachable'
  | 'timeout'
  | 'closed'
  | 'upstream_status'
  | 'redirect'
  | 'media_type'
  | 'malformed'
  | 'too_deep'
  | 'too_large'
  | 'unanswered'
  /** resource-server: the upstream refused the gateway's credential (401/403), or none could be had. */
  | 'upstream_auth';

const UNAVAILABLE: ReadonlySet<UpstreamFailureReason> = new Set([
  'unreachable',
  'timeout',
  'closed',
  'upstream_status',
  'upstream_auth',
]);

/** The JSON-RPC error for one forwarded request the upstream failed: -32041 or -32042 by reason. */
export function upstreamFailure(
  exchange: Exchange,
  id: JsonRpcId,
  reason: UpstreamFailureReason,
  message: string,
  extra: Record<string, unknown> = {},
): JsonRpcResponse {
  return upstreamFailureOf(exchange.checkpoint.config.name, id, reason, message, extra);
}

/** {@link upstreamFailure} for a request of `server` sent outside an HTTP exchange (a bridged session). */
export function upstreamFailureOf(
  server: string,
  id: JsonRpcId,
  reason: UpstreamFailureReason,
  message: string,
  extra: Record<string, unknown> = {},
): JsonRpcResponse {
  const code = UNAVAILABLE.has(reason) ? ErrorCodes.UPSTREAM_UNAVAILABLE : ErrorCodes.UPSTREAM_INVALID;
  return jsonRpcError(id, code, message, { reason, server, ...extra });
}

/**
 * The body that answers every forwarded request with an upstream failure, with the refused batch
 * members beside them: an array for a batch, one error otherwise (id null when nothing was forwarded).
 */
export function failurePayload(
  exchange: Exchange,
  reason: UpstreamFailureReason,
  message: string,
  extra: Record<string, unknown> = {},
): unknown {
  const errors = exchange.requestIds.map((id) => upstreamFailure(exchange, id, reason, message, extra));
  if (exchange.batch) return [...errors, ...exchange.refused];
  return errors[0] ?? upstreamFailure(exchange, null, reason, message, extra);
}
