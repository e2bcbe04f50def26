import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { GatewayError } from '../errors.js';
import { handlerFailure } from './handlerFailure.js';
import { errorSummary } from '../observe/errorSummary.js';
import { injectActiveTrace } from '../observe/tracing.js';
import { mcpBodyKind, parseMediaType } from '../wire/mediaType.js';
import { DEFAULT_MAX_BRIDGED_MESSAGE_BYTES, DEFAULT_TIMEOUT_MS } from '../defaults.js';

/** Options of {@link LegacySseClientTransport}. */
export interface LegacySseClientOptions {
  /** Headers of every request (the pin's, and the client's credentials). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Bound on one SSE event (data and partial lines buffered). @default 10 MiB of characters */
  readonly maxEventChars?: number;
  /** Bound on start(): the stream's headers and its `endpoint` event. @default 30000 */
  readonly startTimeoutMs?: number;
}

/** The upstream's SSE stream could not be opened, or ended: the connection is gone. */
export class LegacySseStreamError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LegacySseStreamError';
  }
}

/**
 * The client side of the 2024-11-05 HTTP+SSE transport, parsed by the gateway itself: a GET opens
 * the event stream, whose `endpoint` event names (on the same origin) where messages are POSTed.
 * Unlike the SDK's SSEClientTransport it validates nothing itself and hides nothing: `onmessage`
 * receives every event's data as parsed JSON (JSON whitespace allowed), for the consumer to check
 * with checkUpstreamMessage, so an invalid answer is refused under its id instead of vanishing in a
 * schema. Redirects are not followed; a stream that breaks is not reconnected (a new upstream
 * session would be uninitialized): it ends the connection. A handler that throws ends the
 * connection with GW_SESSION_FAILED, never the process.
 */
export class LegacySseClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #url: URL;
  readonly #options: LegacySseClientOptions;
  readonly #abort = new AbortController();
  #endpoint: URL | undefined;
  #protocolVersion: string | undefined;
  #started = false;
  #closed = false;
  /** While set, the stream is not read (pauseReading) until it resolves (resumeReading). */
  #held: Promise<void> | undefined;
  #release: (() => void) | undefined;

  constructor(url: URL, options: LegacySseClientOptions = {}) {
    this.#url = url;
    this.#options = options;
  }

  /** Opens the stream and resolves once the `endpoint` event arrived; rejects when it cannot in time. */
  async start(): Promise<void> {
    if (this.#started) throw new Error('LegacySseClientTransport already started');
    this.#started = true;
    const timeoutMs = this.#options.startTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new LegacySseStreamError(`the upstream sent no endpoint event within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.#open(), timeout]);
    } catch (error) {
      await this.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  async #open(): Promise<void> {
    const response = await fetch(this.#url, {
      headers: { ...this.#options.headers, accept: 'text/event-stream' },
      redirect: 'manual',
      signal: this.#abort.signal,
    }).catch((error: unknown) => {
      throw new LegacySseStreamError(`cannot open the upstream's SSE stream: ${errorSummary(error)}`, {
        cause: error,
      });
    });
    const kind = mcpBodyKind(parseMediaType(response.headers.get('content-type') ?? undefined));
    if (response.status !== 200 || kind !== 'sse' || response.body === null) {
      await response.body?.cancel().catch(() => undefined);
      throw new LegacySseStreamError(
        response.status === 200
          ? "the upstream's SSE stream is not text/event-stream"
          : `the upstream's SSE stream answered HTTP ${response.status}`,
      );
    }
    const body = response.body;
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const parser = createParser({
        maxBufferSize: this.#options.maxEventChars ?? DEFAULT_MAX_BRIDGED_MESSAGE_BYTES,
        onEvent: (event) => {
          if (this.#endpoint === undefined) {
            if (event.event !== 'endpoint') return;
            const endpoint = this.#endpointOf(event.data);
            if (typeof endpoint === 'string') {
              settled = true;
              reject(new LegacySseStreamError(endpoint));
              return;
            }
            this.#endpoint = endpoint;
            settled = true;
            resolve();
            return;
          }
          this.#event(event);
        },
        onError: (error) =>
          this.#fail(new LegacySseStreamError(`the upstream's SSE stream: ${error.message}`)),
      });
      void this.#read(body, parser.feed.bind(parser)).then(() => {
        if (settled) return;
        reject(new LegacySseStreamError("the upstream's SSE stream ended before its endpoint event"));
      });
    });
  }

  /** The endpoint event's URL, or why it cannot be used. */
  #endpointOf(data: string): URL | string {
    let endpoint: URL;
    try {
      endpoint = new URL(data.trim(), this.#url);
    } catch {
      return "the upstream's endpoint event is not a URL";
    }
    if (endpoint.origin !== this.#url.origin)
      return "the upstream's endpoint event names another origin than its SSE stream";
    return endpoint;
  }

  /** Reads the stream to its end (or an abort), then ends the connection. */
  async #read(body: ReadableStream<Uint8Array>, feed: (text: string) => void): Promise<void> {
    const decoder = new TextDecoder('utf-8');
    try {
      for await (const chunk of body) {
        if (this.#closed) break;
        feed(decoder.decode(chunk, { stream: true }));
        // Held back: the next chunk is not pulled, so the socket's window fills and the server waits.
        if (this.#held !== undefined) await this.#held;
      }
    } catch (error) {
      if (!this.#closed)
        this.onerror?.(
          new LegacySseStreamError(`the upstream's SSE stream broke: ${errorSummary(error)}`, {
            cause: error,
          }),
        );
    }
    void this.close();
  }

  /** One event after the endpoint: its data is a JSON-RPC message (checked by the consumer). */
  #event(event: EventSourceMessage): void {
    if (event.event !== undefined && event.event !== 'message') return;
    let value: unknown;
    try {
      value = JSON.parse(event.data);
    } catch {
      this.onerror?.(
        new GatewayError('GW_UPSTREAM_INVALID', "an event of the upstream's SSE stream is not JSON"),
      );
      return;
    }
    try {
      this.onmessage?.(value as JSONRPCMessage);
    } catch (error) {
      this.#fail(handlerFailure(error));
    }
  }

  #fail(error: Error): void {
    if (this.#closed) return;
    this.onerror?.(error);
    void this.close();
  }

  /** POSTs one message to the endpoint; rejects when the upstream does not accept it (2xx). */
  async send(message: JSONRPCMessage): Promise<void> {
    const endpoint = this.#endpoint;
    if (endpoint === undefined || this.#closed)
      throw new GatewayError('GW_UPSTREAM_UNREACHABLE', "the upstream's SSE stream is not open");
    const body = JSON.stringify(message);
    const headers: Record<string, string> = {
      ...this.#options.headers,
      'content-type': 'application/json',
      ...(this.#protocolVersion === undefined ? {} : { 'mcp-protocol-version': this.#protocolVersion }),
    };
    // The traceparent of the client request this message is sent for (tracing on).
    injectActiveTrace(headers);
    const response = await fetch(endpoint, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: this.#abort.signal,
    });
    // Answers arrive on the stream; whatever the POST's body says is not read.
    await response.body?.cancel().catch(() => undefined);
    if (response.status < 200 || response.status > 299)
      throw new GatewayError(
        'GW_UPSTREAM_UNREACHABLE',
        `the upstream refused a message (HTTP ${response.status})`,
        { status: response.status },
      );
  }

  /** Stops reading the stream after the chunk being read (the client's queue is full). */
  pauseReading(): void {
    if (this.#closed || this.#held !== undefined) return;
    this.#held = new Promise((resolve) => (this.#release = resolve));
  }

  resumeReading(): void {
    this.#release?.();
    this.#held = undefined;
    this.#release = undefined;
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  /** Ends the stream; onclose is called once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#abort.abort();
    this.resumeReading();
    this.onclose?.();
  }
}
