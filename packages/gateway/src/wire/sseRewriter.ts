import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { encodeSseEvent } from './sseEncode.js';
import { DEFAULT_MAX_UPSTREAM_BYTES } from '../defaults.js';

/**
 * Decides what becomes of one event's data: `undefined` passes it unchanged, a string replaces
 * the data, `null` drops the event.
 */
export type SseDataRewrite = (data: string, event: EventSourceMessage) => string | null | undefined;

/** Options of {@link SseRewriter}. */
export interface SseRewriterOptions {
  /** Called with each complete event. */
  rewrite: SseDataRewrite;
  /** Receives the re-encoded output, event by event, as soon as each event is complete. */
  write: (text: string) => void;
  /**
   * Upper bound on one buffered event, in characters; a stream past it is broken.
   * @default 64 MiB
   */
  maxEventChars?: number;
  /** Called once when the stream cannot be parsed (e.g. an event over the bound). */
  onError?: (error: Error) => void;
  /** Called for each event of a type other than `message`, which is dropped (its id kept). */
  onIgnored?: () => void;
}

/**
 * Rewrites an SSE stream event by event. Nothing is held back beyond the current incomplete
 * event: ids, retry fields and comments (keep-alives) are written as they arrive. Only `message`
 * events (the default type) reach `rewrite`, and leave as message events: an event of any other
 * type (`event: heartbeat`, `event: Message`) is one no MCP client reads as a message, so it is
 * never judged as one; it is dropped, and only its id (a client's resumption point) is written.
 */
export class SseRewriter {
  readonly #decoder = new StringDecoder('utf8');
  readonly #parser: EventSourceParser;
  readonly #options: SseRewriterOptions;
  #failed = false;
  /** The text fed so far ended with a CR (a following LF belongs to the same line ending). */
  #afterCr = false;

  constructor(options: SseRewriterOptions) {
    this.#options = options;
    this.#parser = createParser({
      maxBufferSize: options.maxEventChars ?? DEFAULT_MAX_UPSTREAM_BYTES,
      onEvent: (event) => this.#onEvent(event),
      onRetry: (retry) => options.write(`retry: ${retry}\n\n`),
      // Comments carry keep-alives; they are passed on at once, never batched with later events.
      onComment: (comment) => options.write(comment === '' ? ':\n\n' : `: ${comment}\n\n`),
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.#fail(error);
      },
    });
  }

  /** Feeds raw bytes from the upstream. */
  push(chunk: Buffer | string): void {
    if (this.#failed) return;
    try {
      this.#parser.feed(this.#lineFeeds(typeof chunk === 'string' ? chunk : this.#decoder.write(chunk)));
    } catch (error) {
      this.#fail(error as Error);
    }
  }

  /**
   * The text with every line ending (CRLF, CR, LF: all three end a line in SSE) written as LF. The
   * parser holds a line that ends in a bare CR until the next character shows it is not a CRLF,
   * so a stream that uses CR alone would have its last event held back for as long as the upstream
   * keeps quiet; here a CR ends its line at once, and an LF right after it (even in the next
   * chunk) is the same line ending.
   */
  #lineFeeds(text: string): string {
    if (text === '') return text;
    let out = text;
    if (this.#afterCr && out.charCodeAt(0) === 10 /* \n */) out = out.slice(1);
    this.#afterCr = out.charCodeAt(out.length - 1) === 13; /* \r */
    return out.indexOf('\r') < 0 ? out : out.replace(/\r\n?/g, '\n');
  }

  /** Flushes a final event that lacked its blank line, as clients would dispatch nothing for it. */
  end(): void {
    if (this.#failed) return;
    const rest = this.#decoder.end();
    if (rest) this.push(rest);
  }

  #onEvent(event: EventSourceMessage): void {
    const id = event.id === undefined ? {} : { id: event.id };
    if (event.event !== undefined && event.event !== 'message') {
      this.#options.onIgnored?.();
      if (event.id !== undefined) this.#options.write(encodeSseEvent({ id: event.id, data: '' }));
      return;
    }
    const replaced = this.#options.rewrite(event.data, event);
    if (replaced === null) return;
    // `event: message` and no type are one type to every reader: the upstream's spelling of it stays.
    const type = event.event === undefined ? {} : { event: 'message' };
    this.#options.write(encodeSseEvent({ ...id, ...type, data: replaced ?? event.data }));
  }

  #fail(error: Error): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#options.onError?.(error);
  }
}
