import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { handlerFailure } from './handlerFailure.js';
import {
  checkUpstreamMessage,
  unverifiableAnswer,
  upstreamBatch,
  type InvalidUpstreamMessage,
} from '../wire/upstreamMessage.js';

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
    // A batch: each message on its own (dropped whole, the requests it answers went unanswered).
    inner.onmessage = (value, extra) => {
      for (const message of upstreamBatch(value)) this.#receive(message, extra);
    };
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
      this.onerror?.(handlerFailure(error));
      void this.#inner.close().catch(() => undefined);
    }
  }
}
