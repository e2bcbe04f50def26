import { SdkHttpError } from '@modelcontextprotocol/client';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * Why one attempt to connect to an HTTP upstream failed:
 * - `network`: nothing answered (refused, DNS, reset); another transport would not fare better.
 * - `auth`: HTTP 401 or 403; the server is there and wants credentials, whatever its transport.
 * - `refused`: HTTP 400, 404 or 405, the answers after which the MCP spec tells a client to try the
 *   2024-11-05 HTTP+SSE transport (transports, backwards compatibility).
 * - `other`: any other status or failure (5xx, a timeout, a body that is not MCP).
 */
export interface AttemptFailure {
  readonly kind: 'network' | 'auth' | 'refused' | 'other';
  /** The HTTP status, when the failure was an HTTP answer. */
  readonly status: number | undefined;
  /** One line for a person: the error message and its cause. */
  readonly reason: string;
}

// By shape, not instanceof: fetch's errors come from Node's realm, which a test VM does not share.
function messageOf(value: unknown): string | undefined {
  const message =
    typeof value === 'object' && value !== null ? (value as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : undefined;
}

/** The error message, with its cause's when there is one (fetch hides the socket error there). */
export function describeError(error: unknown): string {
  const message = messageOf(error);
  if (message === undefined) return String(error);
  const cause = messageOf((error as { cause?: unknown }).cause);
  return cause === undefined ? message : `${message} (${cause})`;
}

// Each SDK transport carries the status in its own error class; the v2 class keeps `code` for its own names.
function statusOf(error: unknown): number | undefined {
  let status: unknown;
  if (error instanceof StreamableHTTPError || error instanceof SseError) status = error.code;
  else if (error instanceof SdkHttpError) status = error.status;
  return typeof status === 'number' && status >= 100 && status <= 599 ? status : undefined;
}

// fetch rejects with TypeError('fetch failed') (cause: ECONNREFUSED, ENOTFOUND…); the SSE and v2
// clients wrap it in errors of their own, naming it in the message or keeping it as the cause.
function isNetworkError(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 4 && current !== undefined; depth++) {
    if (/fetch failed/i.test(messageOf(current) ?? '')) return true;
    current =
      typeof current === 'object' && current !== null ? (current as { cause?: unknown }).cause : undefined;
  }
  return false;
}

/** Classifies the error an SDK client threw while connecting, to choose whether another transport is worth trying. */
export function classifyAttemptFailure(error: unknown): AttemptFailure {
  const reason = describeError(error);
  const status = statusOf(error);
  if (status === 401 || status === 403) return { kind: 'auth', status, reason };
  if (status === 400 || status === 404 || status === 405) return { kind: 'refused', status, reason };
  if (status === undefined && isNetworkError(error)) return { kind: 'network', status, reason };
  return { kind: 'other', status, reason };
}
