import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../../src/errors.js';
import { SessionEventStore } from '../../src/ingress/sessionEventStore.js';

/** The SDK v1 server transport's id of the session's GET stream. */
const GET_STREAM = '_GET_stream';

interface ProgressNotification {
  jsonrpc: '2.0';
  method: 'notifications/progress';
  params: { progressToken: string; progress: number };
}

function progress(step: number): ProgressNotification {
  return { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: step } };
}

/** The step of a progress notification; fails the test when `message` is not one. */
function stepOf(message: JSONRPCMessage): number {
  const step =
    'method' in message && message.method === 'notifications/progress' ? message.params?.progress : undefined;
  if (typeof step !== 'number') throw new Error(`not a progress notification: ${JSON.stringify(message)}`);
  return step;
}

/** Replays after `eventId`; returns the stream and the [id, message] pairs sent. */
async function replay(
  store: SessionEventStore,
  eventId: string,
): Promise<{ stream: string; sent: [string, JSONRPCMessage][] }> {
  const sent: [string, JSONRPCMessage][] = [];
  const stream = await store.replayEventsAfter(eventId, {
    send: (id, message) => {
      sent.push([id, message]);
      return Promise.resolve();
    },
  });
  return { stream, sent };
}

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('SessionEventStore', () => {
  it("replays the events of the cursor's stream after it, in order, as they were when stored", async () => {
    const store = new SessionEventStore();
    const first = await store.storeEvent('a', progress(1));
    const mutable = progress(2);
    const second = await store.storeEvent('a', mutable);
    await store.storeEvent('b', progress(99));
    const third = await store.storeEvent('a', { jsonrpc: '2.0', id: 1, result: {} });
    mutable.params.progress = 42;
    expect(await store.getStreamIdForEventId(first)).toBe('a');
    expect(await replay(store, first)).toEqual({
      stream: 'a',
      sent: [
        [second, progress(2)],
        [third, { jsonrpc: '2.0', id: 1, result: {} }],
      ],
    });
  });

  it('sends the messages stored while a replay hands one over', async () => {
    const store = new SessionEventStore();
    const cursor = await store.storeEvent('a', progress(1));
    await store.storeEvent('a', progress(2));
    const sent: number[] = [];
    await store.replayEventsAfter(cursor, {
      send: async (_id, message) => {
        const step = stepOf(message);
        sent.push(step);
        if (step === 2) await store.storeEvent('a', progress(3));
      },
    });
    expect(sent).toEqual([2, 3]);
  });

  it('refuses to resume from the answer that ended a request stream, and resumes from before it', async () => {
    const store = new SessionEventStore();
    const priming = await store.storeEvent('a', {} as JSONRPCMessage);
    const answer = await store.storeEvent('a', {
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32040, message: 'blocked' },
    });
    expect(await store.getStreamIdForEventId(answer)).toBeUndefined();
    expect(await store.getStreamIdForEventId(priming)).toBe('a');
    expect((await replay(store, priming)).sent.map(([id]) => id)).toEqual([answer]);
    // A server request is no answer: the stream goes on.
    const asked = await store.storeEvent('b', { jsonrpc: '2.0', id: 7, method: 'sampling/createMessage' });
    expect(await store.getStreamIdForEventId(asked)).toBe('b');
  });

  it('refuses ids it never issued', async () => {
    const store = new SessionEventStore();
    await store.storeEvent('a', progress(1));
    for (const id of ['', 'a', 'a/', '/0', 'a/x', 'a/7', 'b/0', 'a/1e3', 'a/-1'])
      expect(await store.getStreamIdForEventId(id)).toBeUndefined();
    expect(await refusal(replay(store, 'a/7'))).toMatchObject({ code: 'GW_RESUME_UNAVAILABLE' });
  });

  it("refuses another store's ids, though its counters are the same", async () => {
    const mine = new SessionEventStore();
    const other = new SessionEventStore();
    await mine.storeEvent(GET_STREAM, progress(1));
    const foreign = await other.storeEvent(GET_STREAM, progress(1));
    expect(await mine.getStreamIdForEventId(foreign)).toBeUndefined();
  });

  it('refuses a request stream that reappears after all its events were dropped', async () => {
    const store = new SessionEventStore({ maxEvents: 3 });
    await store.storeEvent('s', progress(0));
    const cursor = await store.storeEvent('s', progress(1));
    await store.storeEvent('s', progress(2));
    for (let step = 0; step < 3; step++) await store.storeEvent(GET_STREAM, progress(10 + step));
    // Every event of s was dropped (progress 2 among them); then its answer arrives.
    await store.storeEvent('s', { jsonrpc: '2.0', id: 1, result: {} });
    expect(await store.getStreamIdForEventId(cursor)).toBeUndefined();
  });

  it('holds at most maxEvents, the oldest dropped first, and refuses a request stream that lost events after the cursor', async () => {
    const store = new SessionEventStore({ maxEvents: 3 });
    const ids = [];
    for (let step = 1; step <= 5; step++) ids.push(await store.storeEvent('a', progress(step)));
    expect(store.size).toBe(3);
    // Events 1 and 2 were dropped: resuming after event 1 would skip event 2.
    expect(await store.getStreamIdForEventId(ids[0] ?? '')).toBeUndefined();
    const error = await refusal(replay(store, ids[0] ?? ''));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'GW_RESUME_UNAVAILABLE' });
    // After event 2 nothing is missing, though event 2 itself is gone.
    const after = await replay(store, ids[1] ?? '');
    expect(after.sent.map(([id]) => id)).toEqual(ids.slice(2));
  });

  it('holds at most maxBytes of JSON, and never holds a message bigger than the bound', async () => {
    const message = progress(1);
    const size = Buffer.byteLength(JSON.stringify(message));
    const store = new SessionEventStore({ maxBytes: size * 2 });
    const cursor = await store.storeEvent('a', message);
    for (let step = 2; step <= 4; step++) await store.storeEvent('a', progress(step));
    expect(store.size).toBe(2);
    expect(store.bytes).toBe(size * 2);
    const before = await store.storeEvent('b', progress(1));
    await store.storeEvent('b', { jsonrpc: '2.0', id: 1, result: { text: 'x'.repeat(size * 3) } });
    expect(store.bytes).toBeLessThanOrEqual(size * 2);
    // The answer was never held: a replay would leave the client waiting for it.
    expect(await store.getStreamIdForEventId(before)).toBeUndefined();
    expect(await store.getStreamIdForEventId(cursor)).toBeUndefined();
  });

  it("resumes the session's GET stream past dropped notifications, with what it still holds", async () => {
    const store = new SessionEventStore({ maxEvents: 2 });
    const cursor = await store.storeEvent(GET_STREAM, progress(1));
    for (let step = 2; step <= 4; step++) await store.storeEvent(GET_STREAM, progress(step));
    expect(await store.getStreamIdForEventId(cursor)).toBe(GET_STREAM);
    const { sent } = await replay(store, cursor);
    expect(sent.map(([, message]) => stepOf(message))).toEqual([3, 4]);
  });

  it('forgets the streams whose events are all dropped: a long session keeps a bounded number', async () => {
    const store = new SessionEventStore({ maxEvents: 10 });
    await store.storeEvent(GET_STREAM, progress(0));
    for (let request = 0; request < 5000; request++) {
      await store.storeEvent(`request-${request}`, progress(1));
      await store.storeEvent(`request-${request}`, { jsonrpc: '2.0', id: request, result: {} });
    }
    expect(store.size).toBe(10);
    // The 5 newest request streams, and the GET stream.
    expect(store.streams).toBe(6);
  });

  it('releases every event when the session ends, and holds nothing after', async () => {
    const store = new SessionEventStore();
    const cursor = await store.storeEvent('a', progress(1));
    await store.storeEvent('a', progress(2));
    await store.storeEvent(GET_STREAM, progress(3));
    expect(store.size).toBe(3);
    store.close();
    expect([store.size, store.bytes, store.streams]).toEqual([0, 0, 0]);
    const late = await store.storeEvent('a', progress(4));
    expect(late).toEqual(expect.any(String));
    expect(store.size).toBe(0);
    expect(await store.getStreamIdForEventId(cursor)).toBeUndefined();
    expect(await refusal(replay(store, cursor))).toMatchObject({ code: 'GW_RESUME_UNAVAILABLE' });
  });
});
