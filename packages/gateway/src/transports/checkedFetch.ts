import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { injectActiveTrace, tracingActive } from '../observe/tracing.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { mcpBodyKind, parseMediaType } from '../wire/mediaType.js';
import { readBounded } from '../wire/readBounded.js';
import { SseRewriter } from '../wire/sseRewriter.js';
import { idKey, isResponse, jsonRpcError, type JsonRpcId } from '../wire/jsonRpc.js';
import {
  checkUpstreamMessage,
  decideUpstreamText,
  unverifiableAnswer,
  type InvalidUpstreamMessage,
} from '../wire/upstreamMessage.js';
import { DEFAULT_MAX_UPSTREAM_BYTES } from '../defaults.js';

/** What {@link checkedFetch} reports and names. */
export interface CheckedFetchOptions {
  /** Names the server in the -32042 errors. */
  readonly server: string;
  /** Receives each upstream message dropped as invalid; `answered`: its request got -32042 instead. */
  readonly onInvalid: (invalid: InvalidUpstreamMessage, answered: boolean) => void;
  /** Bound on a JSON answer and on one SSE event. @default 64 MiB */
  readonly maxBodyBytes?: number;
}

type Unverifiable = 'redirect' | 'media_type' | 'malformed' | 'too_large';

/** Requests remembered as awaiting an answer; beyond this the oldest are forgotten. */
const MAX_PENDING = 10_000;

const DESCRIPTIONS: Record<Unverifiable, string> = {
  redirect: 'the upstream answered with a redirect, which is not followed',
  media_type: "the upstream's answer is neither JSON nor an SSE stream",
  malformed: "the upstream's answer is not JSON",
  too_large: "the upstream's answer is larger than the gateway reads",
};

/** The ids of the requests a POST body carries (what its answer must answer). */
export function requestIdsOf(body: RequestInit['body']): JsonRpcId[] {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const ids: JsonRpcId[] = [];
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    if (typeof message !== 'object' || message === null || !('method' in message)) continue;
    const id = (message as { id?: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return ids;
}

/** A JSON response with these messages (one, or an array), headers of the upstream's kept but the body's. */
function jsonResponse(upstream: Response, messages: unknown[], batch: boolean): Response {
  const headers = new Headers(upstream.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  headers.set('content-type', 'application/json');
  const body = batch || messages.length !== 1 ? messages : messages[0];
  return new Response(JSON.stringify(body), { status: upstream.status, headers });
}

/** The request with the active request span's traceparent (tracing on), else as it is. */
function withTraceHeaders(init: RequestInit | undefined): RequestInit | undefined {
  if (!tracingActive()) return init;
  const headers = new Headers(init?.headers);
  injectActiveTrace(headers);
  return { ...init, headers };
}

/** Reads a body as text, at most `max` bytes; undefined when it is larger. */
async function readText(body: ReadableStream<Uint8Array>, max: number): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  const end = await readBounded(body, max, (chunk) => {
    chunks.push(chunk);
  });
  return end === 'too_large' ? undefined : Buffer.concat(chunks).toString('utf8');
}

/**
 * A fetch for the SDK's StreamableHTTPClientTransport that puts the gateway's parse between the
 * upstream and the SDK: redirects are not followed; a JSON answer is parsed whole (bounded) and an
 * SSE answer event by event, every message checked with checkUpstreamMessage, and what the SDK
 * reads is the gateway's re-serialization. An invalid message that answers a request of the POST
 * becomes that request's -32042 error (the SDK's schema would otherwise drop it with its id, and
 * the request would hang); other invalid messages are dropped. An answer that cannot be read at
 * all (a redirect, another media type, a body that is not JSON) becomes -32042 for each request.
 */
export function checkedFetch(options: CheckedFetchOptions, base: FetchLike = fetch): FetchLike {
  const max = options.maxBodyBytes ?? DEFAULT_MAX_UPSTREAM_BYTES;
  // Requests sent and not answered yet, whatever exchange will answer them (the POST's own answer,
  // or the GET stream after a 202): an invalid message under one of their ids fails that request.
  const pending = new Set<string>();
  /** A valid message, as the SDK reads it; an answer is no longer pending. */
  const accepted = (message: unknown): unknown => {
    if (isResponse(message) && message.id !== null) pending.delete(idKey(message.id));
    return message;
  };
  /** An invalid message: its pending request's -32042, or nothing. */
  const refused = (invalid: InvalidUpstreamMessage): unknown => {
    const answered = invalid.id !== undefined && pending.delete(idKey(invalid.id));
    options.onInvalid(invalid, answered);
    return answered ? unverifiableAnswer(invalid.id as JsonRpcId, invalid, options.server) : undefined;
  };
  /** The message as the SDK may read it: itself, its request's -32042, or nothing. */
  const checked = (message: unknown): unknown => {
    const invalid = checkUpstreamMessage(message);
    return invalid === undefined ? accepted(message) : refused(invalid);
  };
  const notJson = (problem = 'SSE event data is not JSON'): void =>
    options.onInvalid({ reason: 'invalid_message', problem, id: undefined }, false);

  return async (url, init) => {
    const ids = requestIdsOf(init?.body);
    for (const id of ids) {
      pending.add(idKey(id));
      if (pending.size > MAX_PENDING) pending.delete(pending.values().next().value as string);
    }
    const response = await base(url, { ...withTraceHeaders(init), redirect: 'manual' });
    const answerAll = (reason: Unverifiable): Response => {
      for (const id of ids) pending.delete(idKey(id));
      return refuseAll(options.server, response, ids, reason);
    };
    return checkedResponse(response, ids.length > 0, answerAll, { max, accepted, refused, checked, notJson });
  };
}

/** Every request of an exchange answered with the gateway's -32042 for `reason`. */
function refuseAll(
  server: string,
  upstream: Response,
  ids: readonly JsonRpcId[],
  reason: Unverifiable,
): Response {
  const errors = ids.map((id) =>
    jsonRpcError(id, ErrorCodes.UPSTREAM_INVALID, `toolpin: ${DESCRIPTIONS[reason]}`, { reason, server }),
  );
  // Status 200: the SDK reads a JSON body only from a successful answer.
  return jsonResponse(new Response(null, { status: 200, headers: upstream.headers }), errors, true);
}

/** How one exchange's messages are checked (see checkedFetch). */
interface MessageChecks {
  readonly max: number;
  readonly accepted: (message: unknown) => unknown;
  readonly refused: (invalid: InvalidUpstreamMessage) => unknown;
  readonly checked: (message: unknown) => unknown;
  readonly notJson: (problem?: string) => void;
}

/**
 * The upstream's response as the SDK may read it: a redirect, another media type or an unreadable
 * JSON body answered by `answerAll` (when the POST carried requests), an SSE body checked event by
 * event, a JSON body checked whole; an error status, a 202 or no body passed as they are.
 */
async function checkedResponse(
  response: Response,
  awaited: boolean,
  answerAll: (reason: Unverifiable) => Response,
  checks: MessageChecks,
): Promise<Response> {
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    // Never followed: a stream that redirects is no stream (502, nothing for the SDK to follow).
    return awaited ? answerAll('redirect') : new Response(null, { status: 502 });
  }
  if (!response.ok || response.status === 202 || response.body === null) return response;
  const kind = mcpBodyKind(parseMediaType(response.headers.get('content-type') ?? undefined));
  if (kind === 'sse') {
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    return new Response(
      response.body.pipeThrough(checkedSseStream(checks.max, checks.checked, checks.notJson)),
      {
        status: response.status,
        headers,
      },
    );
  }
  if (kind !== 'json') {
    await response.body.cancel().catch(() => undefined);
    return awaited ? answerAll('media_type') : response;
  }
  const text = await readText(response.body, checks.max);
  if (text === undefined) return answerAll('too_large');
  // The same decision as the proxy's for a JSON body (wire/upstreamMessage.ts).
  const decided = decideUpstreamText(text, { valid: checks.accepted, invalid: checks.refused });
  if (!decided.ok) return answerAll('malformed');
  return jsonResponse(response, decided.out, decided.batch);
}

/**
 * Parses an SSE body event by event and writes it again: each event's data parsed as JSON (JSON
 * whitespace allowed) and passed through `check` (a message, its replacement, or nothing); events
 * without data (a priming event's id), `retry` and comments pass as re-encoded; events whose data
 * is not JSON are dropped (reported). Line endings are read as the proxy reads them (a bare CR ends
 * its line at once). An event over `max` characters ends the stream.
 */
function checkedSseStream(
  max: number,
  check: (message: unknown) => unknown,
  notJson: (problem?: string) => void,
): TransformStream<Uint8Array, Uint8Array> {
  const encoder = new TextEncoder();
  let out: TransformStreamDefaultController<Uint8Array> | undefined;
  // The gateway's one SSE reader and writer (line endings, bounds, re-encoding), as on the proxy.
  const rewriter = new SseRewriter({
    maxEventChars: max,
    rewrite: (data, event) => {
      // An event without data passes only when it says something (a priming event's id).
      if (data === '') return event.id === undefined && event.event === undefined ? null : undefined;
      let value: unknown;
      try {
        value = JSON.parse(data);
      } catch {
        notJson();
        return null;
      }
      const message = check(value);
      return message === undefined ? null : JSON.stringify(message);
    },
    write: (text) => out?.enqueue(encoder.encode(text)),
    onError: (error) => out?.error(error),
    onIgnored: () => notJson('an SSE event of a type other than message (no client reads it)'),
  });
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      out = controller;
      rewriter.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    },
    flush(controller) {
      out = controller;
      rewriter.end();
    },
  });
}
