// Red team 16: the change that holds wrap's upstream back while its client reads slowly
// (MessageBridge's client queue, StdioChildTransport / LegacySseClientTransport pauseReading,
// StdioFrontTransport's writes). Each describe is one finding: the attack first, then the
// gateway's answer. In-process wraps on in-memory stdio before the raw stdio fixture.
// What was tried and found sound (no describe here): the client's queue counted in and out once per
// message whatever the send did (StdioFrontTransport's writes never reject; one whose output closed
// resolves on 'close'), so the upstream is never left paused while nothing waits; the silence clock
// stopped while held (timer cleared, #timeOutSilent and #watchSilence refuse) and re-armed on resume
// from that moment, also for a request sent while held; a child killed while held (SIGKILL): the
// session ends once the client reads, the call in flight answered -32041 after everything the child
// wrote before it, as the crash reaches a client without the gateway. Read, not run: the client
// leaving while a dead child is held stops it (close reads it again); the HTTP+SSE client's held
// loop let go by close; the gateway's own listing while held bounded by upstreamTimeoutMs (-32040
// catalog_unavailable, documented), its late answer dropped; a 10 MiB message over a queue just
// under its mark (held past it by that message, as documented); invalid upstream messages and
// unsolicited answers, dropped before the queue.
import { parseServerConfig } from '@toolpin/gateway';
import { untilStill } from '../support/until.js';
import { RAW_ECHO, rawFixtureCommand, stdioPinFor } from '../transports/support.js';
import { floodHeld, floodingChild, floodOf, wrapOnPipes, type Message } from '../transports/wrapPipes.js';

/** 64 KiB notifications: the client's queue holds 64 of them before the child is held back. */
const FILL = 64 * 1024;

/** Resolves with what wrap wrote once nothing more arrived for 300 ms. */
async function settled(messages: () => Message[]): Promise<Message[]> {
  await untilStill(() => messages().length, 12, 'wrap to stop writing');
  return messages();
}

// --- Finding A: a client that ends stdin while its upstream is held back (it stopped reading,
// then leaves: a client's own shutdown, reading what is left of wrap's stdout) got two answers to
// its call: the -32041 the session's end owes every request in flight, then, once the stopped
// child was read again to let it exit, the upstream's own answer that had waited behind the hold
// (boundary.md: "each request gets at most one"), and after it everything else the child wrote
// while being stopped, read at full speed into a queue for a client that no longer reads (no bound
// for the grace period: up to 4 s of a child that ignores the end of its stdin). Now nothing the
// upstream sends after the session ended reaches the client's queue.

describe('redteam16 finding A: the session ended while held, the client got a second answer and the rest of the flood', () => {
  it('answers the call in flight once (-32041), and queues nothing the child writes once stopped', async () => {
    const count = 192;
    // A server that finishes the call in hand before it leaves (the flood, then its answer).
    const child = await floodingChild(count, FILL, { TOOLPIN_RAW_FINISH_ON_END: '1' });
    const wrap = await wrapOnPipes(child.server);
    try {
      wrap.output.pause();
      const before = wrap.messages().length;
      wrap.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hi' } },
      });
      const held = await floodHeld(child.progress, count);
      expect(held).toBeLessThan(count);
      wrap.input.end();
      expect(await wrap.front.ended).toBe('client');
      // The child was read again to let it stop: it got its whole flood out, and its answer.
      expect(await child.progress()).toBe(count);
      wrap.output.resume();
      // Its one answer first (a loaded machine may pause between writes), then anything after it.
      await wrap.answered(2);
      const after = (await settled(wrap.messages)).slice(before);
      const answers = after.filter((m) => m.id === 2);
      expect(answers).toHaveLength(1);
      expect(answers[0]).toMatchObject({ id: 2, error: { code: -32041 } });
      // What the session queued before it ended, never what the child wrote as it was stopped.
      expect(floodOf(after).length).toBeLessThanOrEqual(held);
      expect(wrap.logs.filter((line) => line.event === 'upstream.after_end')).toHaveLength(1);
    } finally {
      wrap.input.end();
      await wrap.front.ended;
      await child.remove();
    }
  });
});

// --- Finding B: wrap's own refusals of what the client sends (-32700 for a line that is not JSON)
// are written by the client transport itself, beside the bridge's bounded queue: a client that
// writes lines of garbage and does not read its stdout had wrap queue every refusal, ~50 times the
// bytes of the 2-byte line it answers, without bound (and two 'drain'/'close' listeners per refusal
// on stdout: a MaxListenersExceededWarning on stderr, where the JSON logs go). The known limit in
// transports.md, and cheap to bound: past 256 KiB of refusals waiting for the client, wrap stops
// reading stdin until they are taken, as a server blocked on its own full stdout does; every line
// is still answered, in order, and the session goes on.

describe('redteam16 finding B: a client writing garbage and not reading had wrap queue its refusals without bound', () => {
  it('stops reading stdin past its bound of refusals, answers every line once read, and goes on', async () => {
    const server = parseServerConfig(stdioPinFor('raw', rawFixtureCommand(), [RAW_ECHO]), '(test)');
    const wrap = await wrapOnPipes(server);
    try {
      wrap.output.pause();
      const before = wrap.messages().length;
      const chunks = 16;
      const perChunk = 1024;
      for (let i = 0; i < chunks; i++) wrap.input.write('x\n'.repeat(perChunk));
      wrap.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
      const held = await untilStill(() => wrap.output.writableLength, 8, 'wrap to stop writing refusals');
      const refusal = JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error' },
      }).length;
      // All of them would be more than 16 * 1024 * 60 bytes (about 1 MB); the bound is 256 KiB,
      // past it by what one chunk read (1024 lines) answers, and stdout's own 16 KiB.
      expect(chunks * perChunk * refusal).toBeGreaterThan(1_000_000);
      expect(held).toBeLessThan(256 * 1024 + perChunk * 2 * refusal + 16 * 1024);
      expect(wrap.output.listenerCount('drain')).toBeLessThanOrEqual(2);
      wrap.output.resume();
      await wrap.answered(2);
      const after = wrap.messages().slice(before);
      expect(after.filter((m) => (m.error as { code?: number } | undefined)?.code === -32700)).toHaveLength(
        chunks * perChunk,
      );
      expect(after.at(-1)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    } finally {
      wrap.input.end();
      await wrap.front.ended;
    }
  });
});

// --- Finding C: the same one layer up. What the bridge answers itself (a call of a tool the pin
// does not hold refused -32040, about 280 bytes for a 68-byte line; a value refused -32600) waits in
// the bridge's queue for the client; past its marks that queue holds the upstream back, but nothing
// held the client: one that sent such calls and did not read had wrap queue every refusal without
// bound. Now past 256 KiB of the gateway's own answers waiting for the client, its stdin is not read
// until they fall under 64 KiB; every call is still answered, in order.

describe('redteam16 finding C: a client sending refused calls and not reading had the bridge queue its refusals without bound', () => {
  it('stops reading stdin past its bound of the gateway own answers, and answers every call once read', async () => {
    const server = parseServerConfig(stdioPinFor('raw', rawFixtureCommand(), [RAW_ECHO]), '(test)');
    const wrap = await wrapOnPipes(server);
    try {
      wrap.output.pause();
      const before = wrap.messages().length;
      const calls = 4000;
      const call = (id: number): string =>
        `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x' } })}\n`;
      // A client writing as a pipe takes it (waiting for 'drain' when full), 100 calls a write,
      // each write a read of its own for wrap (setImmediate), and reading nothing.
      let written = 0;
      const writer = (async () => {
        for (let id = 10; id < 10 + calls; id += 100) {
          const chunk = Array.from({ length: 100 }, (_, i) => call(id + i)).join('');
          if (!wrap.input.write(chunk)) await new Promise((resolve) => wrap.input.once('drain', resolve));
          written += 100;
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const blocked = (): number => wrap.logs.filter((line) => line.event === 'call.blocked').length;
      const decided = await untilStill(blocked, 8, 'wrap to stop deciding calls');
      // About 280 bytes each: 256 KiB is some 940 of them, past it by what one read held (100).
      expect(decided).toBeLessThan(1200);
      expect(written).toBeLessThan(calls);
      wrap.output.resume();
      await writer;
      await wrap.answered(10 + calls - 1);
      const answers = wrap
        .messages()
        .slice(before)
        .filter((m) => m.id !== undefined);
      expect(answers.map((m) => m.id)).toEqual([...Array(calls).keys()].map((i) => 10 + i));
      expect(answers.every((m) => (m.error as { code?: number } | undefined)?.code === -32040)).toBe(true);
    } finally {
      wrap.output.resume();
      wrap.input.end();
      await wrap.front.ended;
    }
  });
});
