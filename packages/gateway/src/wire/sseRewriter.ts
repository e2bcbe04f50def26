import { isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { encodeSseEvent } from './sseEncode.js';
import { DEFAULT_MAX_UPSTREAM_BYTES } from '../defaults.js';

/**
 * Decides what becomes of one event's data: `undefined` passes it unchanged, a string replaces
 * the data, `null` drops the event.
 */
export type SseDataRewrite = (data: string, event: EventSourceMessage) => string | null | undefined;

/**
 * Decides a simple event from its data bytes (the slices of the chunks it arrived in, in order,
 * never copied): the pieces that replace its data (written as one `data:` line), or undefined to
 * decide it as text through {@link SseDataRewrite}. Only for an event the byte path found whole.
 */
export type SseBytesRewrite = (
  slices: readonly Buffer[],
  length: number,
) => readonly (string | Buffer)[] | undefined;

/** Options of {@link SseRewriter}. */
export interface SseRewriterOptions {
  /** Called with each complete event. */
  rewrite: SseDataRewrite;
  /** Receives the re-encoded output, event by event, as soon as each event is complete. */
  write: (text: string) => void;
  /** Tried first on a simple event's data bytes; what it returns is written through `writeParts`. */
  rewriteBytes?: SseBytesRewrite;
  /** Receives the pieces of one event answered by `rewriteBytes`, to be written at once. */
  writeParts?: (parts: readonly (string | Buffer)[]) => void;
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
  // The general parser and its decoder are made when a stream first needs them: a POST answered
  // by one simple event never does.
  #decoder: StringDecoder | undefined;
  #parser: EventSourceParser | undefined;
  readonly #options: SseRewriterOptions;
  readonly #maxEventChars: number;
  #failed = false;
  /** The text fed so far ended with a CR (a following LF belongs to the same line ending). */
  #afterCr = false;
  /**
   * The bytes so far end an event (they end in LF LF, or nothing came yet): the general parser
   * holds nothing, so the next event may be found in the bytes. Undefined: nothing came yet.
   */
  #boundary: boolean | undefined;
  /** The chunks of a simple event being found in the bytes (see SimpleEventScan). */
  #scan: SimpleEventScan | undefined;

  constructor(options: SseRewriterOptions) {
    this.#options = options;
    this.#maxEventChars = options.maxEventChars ?? DEFAULT_MAX_UPSTREAM_BYTES;
  }

  #general(): EventSourceParser {
    if (this.#parser !== undefined) return this.#parser;
    const options = this.#options;
    this.#parser = createParser({
      maxBufferSize: this.#maxEventChars,
      onEvent: (event) => this.#onEvent(event),
      onRetry: (retry) => options.write(`retry: ${retry}\n\n`),
      // Comments carry keep-alives; they are passed on at once, never batched with later events.
      onComment: (comment) => options.write(comment === '' ? ':\n\n' : `: ${comment}\n\n`),
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.#fail(error);
      },
    });
    // Events the byte path took came first: the parser's first text is no stream start (no BOM).
    if (this.#boundary === true) this.#parser.feed('');
    return this.#parser;
  }

  /** Feeds raw bytes from the upstream. */
  push(chunk: Buffer | string): void {
    if (this.#failed) return;
    try {
      if (typeof chunk !== 'string' && (this.#scan !== undefined || this.#boundary !== false))
        this.#scanBytes(chunk);
      else this.#feed(chunk);
    } catch (error) {
      this.#fail(error as Error);
    }
  }

  /** Feeds the general parser (text, or bytes through the decoder). */
  #feed(chunk: Buffer | string): void {
    const parser = this.#general();
    if (typeof chunk === 'string') {
      this.#boundary = false;
      parser.feed(this.#lineFeeds(chunk));
      return;
    }
    this.#decoder ??= new StringDecoder('utf8');
    parser.feed(this.#lineFeeds(this.#decoder.write(chunk)));
    // Bytes that end in LF LF leave nothing pending in the decoder, the line endings or the parser.
    this.#boundary = chunk.length >= 2 && chunk[chunk.length - 1] === LF && chunk[chunk.length - 2] === LF;
  }

  /**
   * The straight line: at an event boundary, an event of one `data:` line (after an optional
   * `event: message` line), ended by an empty line, all in LF, is found in the bytes and decided
   * without the general parser. Anything else (another field, CR, a comment, more data lines, a
   * stream that starts with a BOM) goes to the general parser, bytes unchanged and in order.
   */
  #scanBytes(chunk: Buffer): void {
    const scan = this.#scan ?? startScan(chunk, this.#boundary === undefined);
    if (scan === undefined) return this.#feed(chunk);
    if (this.#scan !== undefined) scan.chunks.push(chunk);
    this.#scan = scan;
    const found = scan.find(this.#maxEventChars);
    if (found === 'more') return;
    this.#scan = undefined;
    if (found === 'general') {
      for (const held of scan.chunks) this.#feed(held);
      return;
    }
    if (!this.#onSimpleEvent(scan.typed, found.slices, found.length)) {
      for (const held of scan.chunks) this.#feed(held);
      return;
    }
    this.#boundary = true;
    if (found.rest.length > 0) this.push(found.rest);
  }

  /** Decides a simple event found in the bytes; false when its data is not UTF-8 (the general path reads it). */
  #onSimpleEvent(typed: boolean, slices: readonly Buffer[], length: number): boolean {
    const parts = this.#options.rewriteBytes?.(slices, length);
    if (parts !== undefined && this.#options.writeParts !== undefined) {
      this.#options.writeParts([typed ? 'event: message\ndata: ' : 'data: ', ...parts, '\n\n']);
      return true;
    }
    const bytes = slices.length === 1 ? (slices[0] as Buffer) : Buffer.concat(slices, length);
    if (!isUtf8(bytes)) return false;
    const data = bytes.toString('utf8');
    this.#onEvent(
      typed ? { id: undefined, event: 'message', data } : { id: undefined, event: undefined, data },
    );
    return true;
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
    // An event the byte path was still gathering is incomplete: the general parser holds it, as it would have.
    const scan = this.#scan;
    this.#scan = undefined;
    try {
      for (const held of scan?.chunks ?? []) this.#feed(held);
    } catch (error) {
      this.#fail(error as Error);
      return;
    }
    const rest = this.#decoder?.end();
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

const LF = 10;
const CR = 13;
const DATA_PREFIX = Buffer.from('data: ');
const TYPED_PREFIX = Buffer.from('event: message\ndata: ');
/** The longest prefix: a first chunk shorter than this is left to the general parser. */
const PREFIX_BYTES = TYPED_PREFIX.length;

/** Where the scan of a simple event ended: the event (data slices, bytes after it), more bytes needed, or the general path. */
type ScanEnd =
  { readonly slices: Buffer[]; readonly length: number; readonly rest: Buffer } | 'more' | 'general';

/** Starts scanning a simple event at the start of `chunk`, or undefined when it does not start like one. */
function startScan(chunk: Buffer, streamStart: boolean): SimpleEventScan | undefined {
  // A stream that starts with a BOM is the general parser's (it drops it there, only there).
  if (streamStart && chunk[0] === 0xef) return undefined;
  if (chunk.length < PREFIX_BYTES) return undefined;
  if (chunk.compare(TYPED_PREFIX, 0, TYPED_PREFIX.length, 0, TYPED_PREFIX.length) === 0)
    return new SimpleEventScan(chunk, true, TYPED_PREFIX.length);
  if (chunk.compare(DATA_PREFIX, 0, DATA_PREFIX.length, 0, DATA_PREFIX.length) === 0)
    return new SimpleEventScan(chunk, false, DATA_PREFIX.length);
  return undefined;
}

/**
 * The chunks of one simple event found in the bytes: its data runs from the prefix to the first
 * LF, which must be followed by a second LF (the empty line that ends it), with no CR before that.
 */
class SimpleEventScan {
  readonly chunks: Buffer[];
  readonly typed: boolean;
  readonly #dataStart: number;
  /** How many chunks were searched for the data's end, and the bytes held in all. */
  #searched = 0;
  #bytes = 0;
  /** The data's LF was the last byte of a chunk: the next chunk must start with the second LF. */
  #lineEnded = false;

  constructor(first: Buffer, typed: boolean, dataStart: number) {
    this.chunks = [first];
    this.typed = typed;
    this.#dataStart = dataStart;
  }

  find(maxChars: number): ScanEnd {
    for (; this.#searched < this.chunks.length; this.#searched++) {
      const index = this.#searched;
      const chunk = this.chunks[index] as Buffer;
      this.#bytes += chunk.length;
      // Past the bound, the general parser decides (and refuses) the event as it always did.
      if (this.#bytes > maxChars) return 'general';
      if (this.#lineEnded) return chunk[0] === LF ? this.#event(index, -1, 1) : 'general';
      const from = index === 0 ? this.#dataStart : 0;
      const lf = chunk.indexOf(LF, from);
      const cr = chunk.indexOf(CR, from);
      if (cr >= 0 && (lf < 0 || cr <= lf + 1)) return 'general';
      if (lf < 0) continue;
      if (lf + 1 === chunk.length) {
        this.#lineEnded = true;
        continue;
      }
      return chunk[lf + 1] === LF ? this.#event(index, lf, lf + 2) : 'general';
    }
    return 'more';
  }

  /** The event ends in chunk `last`: its data ends at `lf` there (-1: with the chunk before), the rest follows `next`. */
  #event(last: number, lf: number, next: number): ScanEnd {
    const slices: Buffer[] = [];
    let length = 0;
    const end = lf < 0 ? last - 1 : last;
    for (let i = 0; i <= end; i++) {
      const chunk = this.chunks[i] as Buffer;
      const slice = chunk.subarray(
        i === 0 ? this.#dataStart : 0,
        i === end ? (lf < 0 ? chunk.length - 1 : lf) : chunk.length,
      );
      length += slice.length;
      slices.push(slice);
    }
    const tail = this.chunks[last] as Buffer;
    return { slices, length, rest: tail.subarray(next) };
  }
}
