// `toolpin wrap` before a client that reads its stdout slowly: the gateway holds no more than its
// bound of messages for the client, the rest stays in the upstream (a child blocked on its full
// stdout pipe, as it would be without the gateway), and once the client reads, everything arrives
// whole, in order, once. A request in flight while the upstream is held back is not timed out for
// the client's slowness. In-process wrap (runStdioFront on in-memory stdio) before the raw stdio
// fixture, and before a raw HTTP+SSE (2024-11-05) server whose stream is held back the same way.
import type { ServerResponse } from 'node:http';
import { parseServerConfig } from '@toolpin/gateway';
import {
  CLIENT_QUEUE_HIGH_MESSAGES,
  DEFAULT_CLIENT_QUEUE_HIGH_BYTES,
} from '../../packages/gateway/dist/defaults.js';
import { pinFor } from '../support/pinFor.js';
import { startRawLegacyUpstream } from '../support/rawUpstream.js';
import { RAW_ECHO } from './support.js';
import { floodHeld, floodingChild, floodOf, wrapOnPipes } from './wrapPipes.js';

/** A flood: `count` notifications of `fill` characters each; the upstream gets no more than `bound` out. */
interface Flood {
  readonly count: number;
  readonly fill: number;
  readonly bound: number;
  /** The client leaves (ends stdin) while the upstream is held back, never reading. */
  readonly leave?: boolean;
  /**
   * The hold outlasts a short idle limit (IDLE_MS) with the call in flight, which must not time
   * out; otherwise the default limit, and no wait.
   */
  readonly outlastIdle?: boolean;
}

/** Large notifications: the gateway's queue is bounded in characters (its mark: 64 of these). */
const FILL = 64 * 1024;
const QUEUE_MARK = Math.ceil(DEFAULT_CLIENT_QUEUE_HIGH_BYTES / FILL);
/**
 * The upstream's silence allowed while a request is in flight, where the hold outlasts it: short,
 * yet well above a raw fixture's start on a loaded machine (its initialize is in flight too).
 */
const IDLE_MS = 600;

/** The notification of the flood numbered `seq`. */
function floodNotice(seq: number, fill: number): object {
  return {
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: { level: 'info', logger: 'flood', data: { seq, fill: 'x'.repeat(fill) } },
  };
}

/**
 * Runs wrap before `server`, whose echo call floods before it answers, with a client that stops
 * reading before the call: the upstream gets no more than `flood.bound` notifications out
 * (`progress`: its own count) while the call is in flight longer than the idle limit; once the
 * client reads, every notification arrives whole, in order, once, then the call's own answer.
 * With `leave`, the client ends stdin instead: the session ends, the upstream stopped.
 */
async function floodBehindWrap(
  server: ReturnType<typeof parseServerConfig>,
  progress: () => Promise<number>,
  { count, fill, bound, leave = false, outlastIdle = false }: Flood,
): Promise<void> {
  const idle = outlastIdle ? { streamIdleMs: IDLE_MS } : {};
  const { front, input, output, logs, messages, send, answered } = await wrapOnPipes(server, idle);
  try {
    // The client stops reading wrap's stdout; then a call whose server floods before it answers.
    output.pause();
    const before = messages().length;
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'hi' } },
    });
    const held = await floodHeld(progress, count);
    expect(held).toBeLessThan(count);
    expect(held).toBeLessThanOrEqual(bound);
    // Held back for longer than the idle limit (floodHeld waited 400 ms of stillness already):
    // the upstream's silence is the client's doing.
    if (outlastIdle) await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    expect(logs.filter((line) => line.event === 'upstream.timeout')).toEqual([]);
    if (leave) {
      input.end();
      // Resolved once the child and its process group are gone (its stdout read to its end).
      expect(await front.ended).toBe('client');
      return;
    }

    output.resume();
    await answered(2);
    const after = messages().slice(before);
    const flood = floodOf(after);
    expect(flood.map((m) => (m.params?.data as { seq: number }).seq)).toEqual([...Array(count).keys()]);
    expect(flood.every((m) => (m.params?.data as { fill: string }).fill.length === fill)).toBe(true);
    expect(after.filter((m) => m.id === 2)).toEqual([
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'hi' }] } },
    ]);
    expect(after.at(-1)?.id).toBe(2);
    expect(logs.filter((line) => line.event === 'upstream.timeout')).toEqual([]);
  } finally {
    input.end();
    await front.ended;
  }
}

/** Writes `text` on `res`, waiting for 'drain' when it is full (a server held back by its client). */
async function writeHeld(res: ServerResponse, text: string): Promise<void> {
  if (!res.write(text)) await new Promise((resolve) => res.once('drain', resolve));
}

/** wrap before the raw stdio fixture flooding `flood` (how far it got: its flood log). */
async function floodFromChild(flood: Flood): Promise<void> {
  const child = await floodingChild(flood.count, flood.fill);
  try {
    await floodBehindWrap(child.server, child.progress, flood);
  } finally {
    await child.remove();
  }
}

describe('wrap before a client that does not read', () => {
  it('holds a stdio child back, and a call in flight meanwhile gets its own answer after every message', async () => {
    // What the child got out is what the gateway and the pipes between hold: the gateway's queue
    // (its high-water mark) and a message or two in each buffer on the way (the child's stdout,
    // the pipe, the gateway's read, wrap's stdout): about 69, never the flood.
    await floodFromChild({ count: 128, fill: FILL, bound: QUEUE_MARK + 16, outlastIdle: true });
  });

  it('ends the session, the child stopped, when the client leaves while the child is held back', async () => {
    await floodFromChild({ count: 128, fill: FILL, bound: QUEUE_MARK + 16, leave: true });
  });

  it('holds it back at the mark in messages when they are small', async () => {
    // About 100 characters each: the queue's mark is its 1024 messages; each 64 KiB buffer on the
    // way holds some 600 more (about 1,800 held here), never the flood.
    await floodFromChild({ count: 6_000, fill: 16, bound: CLIENT_QUEUE_HIGH_MESSAGES + 2_500 });
  });

  it('holds an HTTP+SSE stream back the same way', async () => {
    const flood: Flood = { count: 320, fill: FILL, bound: 256 };
    let taken = 0;
    const event = (message: object): string => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
    const upstream = await startRawLegacyUpstream(async ({ id, method }, stream) => {
      if (method === 'initialize')
        stream.write(
          event({
            jsonrpc: '2.0',
            id,
            result: {
              protocolVersion: '2025-06-18',
              capabilities: { tools: {} },
              serverInfo: { name: 'flood', version: '1' },
            },
          }),
        );
      else if (method === 'tools/list')
        stream.write(event({ jsonrpc: '2.0', id, result: { tools: [RAW_ECHO] } }));
      else if (method === 'tools/call') {
        for (; taken < flood.count; taken++) await writeHeld(stream, event(floodNotice(taken, flood.fill)));
        stream.write(event({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'hi' }] } }));
      }
    });
    const pin = {
      ...pinFor('flood', upstream.url, [RAW_ECHO]),
      upstream: { url: upstream.url, transport: 'sse' },
    };
    try {
      // Beside the gateway's queue, loopback TCP's buffers hold a few MiB (about 150 held here).
      await floodBehindWrap(parseServerConfig(pin, '(test)'), async () => taken, flood);
    } finally {
      await upstream.close();
    }
  });
});
