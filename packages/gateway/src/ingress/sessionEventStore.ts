import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { GatewayError } from '../errors.js';

/** Options of {@link SessionEventStore}. */
export interface SessionEventStoreOptions {
  /** Events held at most; the oldest go first. @default 1000 */
  readonly maxEvents?: number;
  /** UTF-8 bytes of JSON held at most; the oldest go first, a bigger message is not held. @default 1048576 */
  readonly maxBytes?: number;
}

/** One message as it was sent on a stream (its JSON: a snapshot nobody can mutate, and its exact size). */
interface StoredEvent {
  readonly stream: StreamId;
  readonly json: string;
  readonly bytes: number;
}

/** What the store knows of one stream. */
interface StreamRecord {
  /** Events of the stream still held. */
  held: number;
  /** The newest sequence number of the stream no longer held; -1 while none was dropped. */
  dropped: number;
  /** The stream's newest sequence number. */
  newest: number;
  /** True when the newest event is an answer (a request stream that may be complete). */
  answered: boolean;
}

/** A Last-Event-ID, parsed. */
interface Cursor {
  readonly stream: StreamId;
  readonly seq: number;
}

// Why these bounds: resumption bridges a connection lost for seconds, not minutes. What must survive
// is the tail of the streams a client may come back to (progress and the answers of calls in flight),
// and the SDK never says what a client has read, so a busy session always holds up to its bound.
// 1 MiB holds several large listings or thousands of progress notifications; at the 100 bridged
// sessions a server allows that is at most 100 MiB, reached only if every session streams that much.
// 1000 events bounds the per-entry cost of many small messages below the byte bound.
const DEFAULT_MAX_EVENTS = 1000;
const DEFAULT_MAX_BYTES = 1024 * 1024;

/**
 * The id the SDK v1 server transport gives the session's GET stream (webStandardStreamableHttp.js,
 * `_standaloneSseStreamId`). That stream carries only notifications and server requests, so a
 * cursor on it is resumed even past dropped events (as a reconnect without a store would be).
 */
const STANDALONE_STREAM = '_GET_stream';

/**
 * One bridged session's SSE events, so a client that lost a stream can resume it with
 * `Last-Event-ID` (Streamable HTTP, "Resumability and Redelivery"). Bounded in events and bytes;
 * a request stream is resumed only if every event after the cursor is still held (a replay without
 * the answer would leave the client waiting), and not from the answer that ended it; otherwise the
 * resume is refused. {@link close} forgets everything when the session ends.
 */
export class SessionEventStore implements EventStore {
  readonly #events: LRUCache<number, StoredEvent>;
  readonly #streams = new Map<StreamId, StreamRecord>();
  readonly #maxBytes: number;
  #next = 0;
  /** Prefix of every id this store issues: another session's ids (same counters) are not this one's. */
  readonly #nonce = randomBytes(6).toString('base64url');
  #closed = false;

  constructor(options: SessionEventStoreOptions = {}) {
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    // get() is never called, so the LRU order stays the order of storing: eviction is FIFO.
    this.#events = new LRUCache<number, StoredEvent>({
      max: options.maxEvents ?? DEFAULT_MAX_EVENTS,
      maxSize: this.#maxBytes,
      sizeCalculation: (event) => event.bytes,
      dispose: (event, seq, reason) => {
        if (reason === 'evict') this.#drop(event.stream, seq);
      },
    });
  }

  /** Events held. */
  get size(): number {
    return this.#events.size;
  }

  /** UTF-8 bytes of JSON held. */
  get bytes(): number {
    return this.#events.calculatedSize;
  }

  /** Streams the store knows (held events, or the session's GET stream). */
  get streams(): number {
    return this.#streams.size;
  }

  /** Stores a message sent (or to be sent) on a stream; returns its event id. */
  storeEvent(stream: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const seq = this.#next++;
    const id = this.#idOf(stream, seq);
    if (this.#closed) return Promise.resolve(id);
    const json = JSON.stringify(message);
    const bytes = Buffer.byteLength(json);
    let record = this.#streams.get(stream);
    if (record === undefined) {
      // A request stream that reappears after all its events were dropped lost everything before
      // this event: a cursor from then must be refused, not answered with a gap.
      record = {
        held: 0,
        dropped: stream === STANDALONE_STREAM ? -1 : seq - 1,
        newest: seq,
        answered: false,
      };
      this.#streams.set(stream, record);
    }
    record.newest = seq;
    record.answered = 'id' in message && ('result' in message || 'error' in message);
    if (bytes > this.#maxBytes) {
      record.dropped = seq;
      this.#forgetIfEmpty(stream, record);
    } else {
      record.held += 1;
      this.#events.set(seq, { stream, json, bytes });
    }
    return Promise.resolve(id);
  }

  /** The stream a Last-Event-ID belongs to, if it can be resumed from there (else the SDK answers 400). */
  getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    const cursor = this.#resumable(eventId);
    return Promise.resolve(cursor?.stream);
  }

  /** Sends every held event of the cursor's stream after it, in order; returns the stream. */
  async replayEventsAfter(
    eventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const cursor = this.#resumable(eventId);
    if (cursor === undefined)
      throw new GatewayError(
        'GW_RESUME_UNAVAILABLE',
        'this Last-Event-ID cannot be resumed (not issued, its stream ended, or later events dropped)',
      );
    let after = cursor.seq;
    // Messages stored while an await hands one over are sent too: each round takes what is newer
    // than the last one sent, until nothing is (every round sends at least one event).
    for (let round = 0; round <= this.#events.max; round++) {
      const batch = this.#heldAfter(cursor.stream, after);
      if (batch.length === 0) break;
      for (const [seq, event] of batch) {
        await send(this.#idOf(cursor.stream, seq), JSON.parse(event.json) as JSONRPCMessage);
        after = seq;
      }
    }
    return cursor.stream;
  }

  /** Forgets every event and holds no more: the session ended. */
  close(): void {
    this.#closed = true;
    this.#streams.clear();
    this.#events.clear();
  }

  #heldAfter(stream: StreamId, after: number): [number, StoredEvent][] {
    const out: [number, StoredEvent][] = [];
    for (const [seq, event] of this.#events.rentries() as Iterable<[number, StoredEvent]>)
      if (seq > after && event.stream === stream) out.push([seq, event]);
    return out;
  }

  #resumable(eventId: EventId): Cursor | undefined {
    if (this.#closed) return undefined;
    const cursor = this.#parse(eventId);
    if (cursor === undefined) return undefined;
    const record = this.#streams.get(cursor.stream);
    if (record === undefined) return undefined;
    if (cursor.stream === STANDALONE_STREAM) return cursor;
    if (record.dropped > cursor.seq) return undefined;
    // The cursor is the answer that ended its stream: nothing more will come on it. Replaying
    // nothing would leave a stream open that nobody ends (the SDK v1 client resumes a stream whose
    // last message was an error answer, as if it had no answer), so the resume is refused. (A
    // batch's stream can end with one member's answer while others run: that resume is refused
    // until the next event of the stream is stored.)
    if (record.newest === cursor.seq && record.answered) return undefined;
    return cursor;
  }

  #idOf(stream: StreamId, seq: number): EventId {
    return `${this.#nonce}.${stream}/${seq}`;
  }

  #parse(eventId: EventId): Cursor | undefined {
    const prefix = `${this.#nonce}.`;
    if (!eventId.startsWith(prefix)) return undefined;
    const local = eventId.slice(prefix.length);
    const slash = local.lastIndexOf('/');
    const digits = local.slice(slash + 1);
    if (slash < 1 || !/^\d{1,15}$/.test(digits)) return undefined;
    const seq = Number(digits);
    return seq < this.#next ? { stream: local.slice(0, slash), seq } : undefined;
  }

  #drop(stream: StreamId, seq: number): void {
    const record = this.#streams.get(stream);
    if (record === undefined) return;
    record.held -= 1;
    record.dropped = Math.max(record.dropped, seq);
    this.#forgetIfEmpty(stream, record);
  }

  #forgetIfEmpty(stream: StreamId, record: StreamRecord): void {
    // A request stream with nothing held can no longer be resumed: forget it, so a long session
    // does not keep one record per request it ever made. The GET stream is kept (one record).
    if (record.held === 0 && stream !== STANDALONE_STREAM) this.#streams.delete(stream);
  }
}
