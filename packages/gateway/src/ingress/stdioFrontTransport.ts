import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CLIENT_OWN_ANSWERS_HIGH_BYTES, DEFAULT_MAX_BRIDGED_MESSAGE_BYTES } from '../defaults.js';
import type { GatewayLogger } from '../observe/logger.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import {
  answerableRequests,
  jsonRpcError,
  ownEnvelope,
  parseJsonRpcBody,
  type JsonRpcMessage,
  type JsonRpcResponse,
} from '../wire/jsonRpc.js';
import { LineFramer } from '../wire/lineFramer.js';
import type { ClientPipe } from '../transports/messageBridge.js';

const BATCH_REFUSAL =
  'Invalid Request: a JSON-RPC batch is not carried on stdio; send its messages one per line';

/** Options of {@link StdioFrontTransport}. */
export interface StdioFrontTransportOptions {
  readonly input: Readable;
  readonly output: Writable;
  /** Where a refused line is logged (`client.invalid_message`, never its content). */
  readonly logger: GatewayLogger;
  /** The fields every log line carries (server, session). */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Bound on one line from the client. @default 10 MiB */
  readonly maxLineBytes?: number;
}

/**
 * The client side of `toolpin wrap`: MCP's newline-delimited JSON-RPC on wrap's stdin/stdout, read
 * by the gateway's own parser (`parseJsonRpcBody`, the HTTP fronts' rules) rather than the SDK's
 * schemas, which dropped every line they refused without an answer (the client's request then
 * waited forever). A line that is not JSON is answered `-32700`, one that is not JSON-RPC (an id of
 * the wrong type, params neither object nor array, too deep, a number out of range) `-32600` under
 * the request's id when it has a usable one (`answerableRequests`: nothing else would answer it), else
 * `id: null`; a batch (an array: 2025-03-26 only, and the bridge carries one message at a time),
 * valid or not, is answered with a batch of `-32600`, one per request id it holds; a line over
 * the bound is answered `-32600` and skipped, and the session goes on. What is handed to the
 * bridge is the message's own envelope (`ownEnvelope`): a member beside JSON-RPC's never goes upstream.
 */
export class StdioFrontTransport implements Transport, ClientPipe {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: StdioFrontTransportOptions;
  readonly #lines: LineFramer;
  readonly #maxLineBytes: number;
  #closed = false;
  /** The output failed (the client closed its end): nothing more is written. */
  #outputGone = false;
  /** Resolves when the full output drains (or closes): every write waiting for it shares it. */
  #drained: Promise<void> | undefined;
  /** stdin is not read until the output drains (refusals past CLIENT_OWN_ANSWERS_HIGH_BYTES). */
  #inputHeld = false;
  /** stdin is not read: the bridge's queue of the gateway's own answers is past its mark. */
  #bridgeHeld = false;

  constructor(options: StdioFrontTransportOptions) {
    this.#options = options;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_BRIDGED_MESSAGE_BYTES;
    this.#lines = new LineFramer(this.#maxLineBytes);
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.#lines.push(bytes, (line) => {
      if (!this.#closed) this.#line(line);
      return !this.#closed;
    });
  };

  readonly #onError = (error: Error): void => this.onerror?.(error);

  /**
   * The client's end of stdout is gone (EPIPE: it closed its side, or exited): the client left.
   * Unheard, the stream's 'error' event ended the process with an uncaught exception (exit 1, the
   * code of a server that ended the session). Kept for good: every write after it is dropped.
   */
  readonly #onOutputError = (error: NodeJS.ErrnoException): void => {
    if (this.#outputGone) return;
    this.#outputGone = true;
    this.#options.logger.info(
      { event: 'client.output_closed', ...this.#options.fields, code: error.code },
      'the client closed its end of stdout: the session ends',
    );
    void this.close();
  };

  async start(): Promise<void> {
    this.#options.input.on('data', this.#onData);
    this.#options.input.on('error', this.#onError);
    this.#options.output.on('error', this.#onOutputError);
  }

  #line(bytes: Buffer | undefined): void {
    if (bytes === undefined) {
      this.#refuse(
        'too_large',
        jsonRpcError(
          null,
          ErrorCodes.INVALID_REQUEST,
          `Invalid Request: a line over ${this.#maxLineBytes} bytes`,
        ),
      );
      return;
    }
    const text = bytes.toString('utf8');
    if (text.trim() === '') return;
    const parsed = parseJsonRpcBody(text);
    if (parsed.ok && !parsed.body.batch) {
      this.onmessage?.(ownEnvelope(parsed.body.messages[0] as JsonRpcMessage) as unknown as JSONRPCMessage);
      return;
    }
    // A batch, valid or not, is refused as a batch: each request in it answered under its own id.
    const requests = parsed.ok ? answerableRequests(parsed.body.messages) : parsed.requests;
    if (parsed.ok || (requests?.batch === true && requests.ids.length > 0)) {
      const answers = (requests?.ids ?? []).map((id) =>
        jsonRpcError(id, ErrorCodes.INVALID_REQUEST, BATCH_REFUSAL),
      );
      this.#refuse('batch', answers.length === 0 ? undefined : answers);
      return;
    }
    const kind = parsed.code === ErrorCodes.PARSE_ERROR ? 'malformed' : 'invalid_message';
    // Under the request's id when it has a usable one: nothing else would ever answer it on stdio.
    const id = requests?.ids[0] ?? parsed.id;
    this.#refuse(kind, jsonRpcError(id, parsed.code, parsed.message, parsed.data));
  }

  #refuse(reason: string, answer: JsonRpcResponse | readonly JsonRpcResponse[] | undefined): void {
    this.#options.logger.warn(
      { event: 'client.invalid_message', ...this.#options.fields, reason },
      'a line on stdin refused',
    );
    if (answer === undefined) return;
    void this.#write(answer);
    this.#holdInput();
  }

  /**
   * The client sends what wrap answers itself and does not read it: past
   * CLIENT_OWN_ANSWERS_HIGH_BYTES on stdout, stdin is not read until stdout drains, as a server
   * blocked on its own full stdout reads nothing. What one chunk of stdin read holds is still
   * answered (a 64 KiB read of 2-byte lines: about 3 MiB of refusals).
   */
  #holdInput(): void {
    const { output } = this.#options;
    if (
      this.#inputHeld ||
      !output.writableNeedDrain ||
      output.writableLength <= CLIENT_OWN_ANSWERS_HIGH_BYTES
    )
      return;
    this.#inputHeld = true;
    this.#applyHolds();
    void this.#drain().then(() => {
      this.#inputHeld = false;
      this.#applyHolds();
    });
  }

  /** Stops reading stdin (MessageBridge's clientPipe: its own answers wait for the client past their mark). */
  pauseReading(): void {
    this.#bridgeHeld = true;
    this.#applyHolds();
  }

  resumeReading(): void {
    this.#bridgeHeld = false;
    this.#applyHolds();
  }

  /** stdin flows unless held by either (never again once closed). */
  #applyHolds(): void {
    if (this.#closed) return;
    if (this.#inputHeld || this.#bridgeHeld) this.#options.input.pause();
    else this.#options.input.resume();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  /** Writes one message the bridge serialized (MessageBridge's clientPipe): as send, without serializing it again. */
  sendSerialized(json: string): Promise<void> {
    return this.#writeLine(json);
  }

  #write(value: unknown): Promise<void> {
    return this.#writeLine(JSON.stringify(value));
  }

  /** Writes one line; resolves once the output took it (after `drain` when it was full). */
  #writeLine(json: string): Promise<void> {
    const output = this.#options.output;
    if (this.#outputGone || output.destroyed) return Promise.resolve();
    return output.write(`${json}\n`) ? Promise.resolve() : this.#drain();
  }

  /** Resolves once the full output drains, or closes (one pair of listeners for every waiting write). */
  #drain(): Promise<void> {
    const output = this.#options.output;
    this.#drained ??= new Promise((resolve) => {
      const done = (): void => {
        output.off('drain', done);
        output.off('close', done);
        this.#drained = undefined;
        resolve();
      };
      output.once('drain', done);
      output.once('close', done);
    });
    return this.#drained;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const input = this.#options.input;
    input.off('data', this.#onData);
    input.off('error', this.#onError);
    // Nothing else reads stdin: stop it flowing, so the process is not held open by it.
    if (input.listenerCount('data') === 0) input.pause();
    this.#lines.clear();
    this.onclose?.();
  }
}
