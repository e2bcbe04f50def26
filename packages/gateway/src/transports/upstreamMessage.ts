import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../errors.js';
import { errorSummary } from '../observe/errorSummary.js';
import type { GatewayLogger } from '../observe/logger.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../wire/jsonDepth.js';
import { jsonRpcError, messageProblem, type JsonRpcId, type JsonRpcResponse } from '../wire/jsonRpc.js';

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
 * Checks one JSON value an upstream sent on a bridged path (stdio child, HTTP+SSE stream) before
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

/** Logs a dropped upstream message: what was wrong and whether it answered a request, never its content. */
export function logInvalidMessage(
  logger: GatewayLogger,
  fields: Readonly<Record<string, unknown>>,
  invalid: InvalidUpstreamMessage,
  answered: boolean,
): void {
  logger.warn(
    {
      event: 'upstream.invalid_message',
      ...fields,
      reason: invalid.reason,
      problem: invalid.problem,
      answered,
    },
    answered
      ? 'dropped an invalid upstream message; its request was answered with -32042'
      : 'dropped an invalid upstream message',
  );
}

/**
 * An upstream transport whose messages are checked before its consumer (an SDK Client) sees them:
 * an invalid one is reported to `oninvalid` and, when it carries an id, replaced by the -32042
 * error for that id, so the request it answers fails instead of hanging. A consumer handler that
 * throws is reported to `onerror` as GW_SESSION_FAILED and the upstream is closed.
 */
export class CheckedUpstreamTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly #inner: Transport;
  readonly #server: string;
  readonly #oninvalid: (invalid: InvalidUpstreamMessage) => void;

  constructor(inner: Transport, server: string, oninvalid: (invalid: InvalidUpstreamMessage) => void) {
    this.#inner = inner;
    this.#server = server;
    this.#oninvalid = oninvalid;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.#receive(message, extra);
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  #receive(message: unknown, extra: MessageExtraInfo | undefined): void {
    try {
      const invalid = checkUpstreamMessage(message);
      if (invalid === undefined) {
        this.onmessage?.(message as JSONRPCMessage, extra);
        return;
      }
      this.#oninvalid(invalid);
      if (invalid.id !== undefined)
        this.onmessage?.(unverifiableAnswer(invalid.id, invalid, this.#server) as JSONRPCMessage, extra);
    } catch (error) {
      this.onerror?.(
        new GatewayError(
          'GW_SESSION_FAILED',
          `a message from the upstream could not be handled: ${errorSummary(error)}`,
          {},
          { cause: error },
        ),
      );
      void this.#inner.close().catch(() => undefined);
    }
  }
}
