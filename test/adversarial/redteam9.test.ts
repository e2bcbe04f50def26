import { callRequest, postRaw } from '../support/rawMcp.js';
import { pinFor } from '../support/pinFor.js';
import { useScoped } from '../support/useScoped.js';
import { isUtf8 } from 'node:buffer';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { DeadlineWheel, newDeadline } from '../../packages/gateway/dist/transports/deadlineWheel.js';
import { LiveList, type ListMember } from '../../packages/gateway/dist/state/liveList.js';
import { OpenStreams } from '../../packages/gateway/dist/observe/openStreams.js';
import { answerJson, hangForever, rawHead, writeRawResponse } from './support/maliciousUpstream.js';
import { responseTo } from './support/lenientRead.js';
import { RawConnection, rawPost, rawRequest } from './support/rawClient.js';
import { ECHO, PINNED_TOOLS } from './support/tools.js';
import {
  listRequest,
  openSession,
  postJson,
  SERVER,
  rigAround,
  startRig,
  useRig,
  useSessionRig,
  type Rig,
} from './support/rig.js';

// Red team 9: the intrusive LiveList under the deadline wheel and the open-stream registry, the
// in-flight count of graceful shutdown (7252f7e), the length prefilter of the listing replay
// (9bd4cdd), the SSE relay completing the headers object it is given and the upstream body sent
// as a string (74940b6).

/** The text argument of a tools/call the upstream received (undefined for any other request). */
function callText(message: Record<string, unknown>): string | undefined {
  if (message.method !== 'tools/call') return undefined;
  const args = (message.params as { arguments?: { text?: unknown } } | undefined)?.arguments;
  return typeof args?.text === 'string' ? args.text : undefined;
}

/**
 * The upstream never answers a tools/call whose text is `hang` (everything else as usual); a session's
 * headers and one raw connection to pipeline requests on behind such a call.
 */
async function pipelineBehindHang(
  rig: Rig,
): Promise<{ headers: [string, string][]; connection: RawConnection }> {
  rig.upstream.behaviour = ({ res, message }) => {
    if (callText(message) !== 'hang') return false;
    hangForever(res);
    return true;
  };
  const headers = Object.entries(await openSession(rig.endpoint));
  return { headers, connection: await RawConnection.open(rig.endpoint) };
}

/** Resolves once `done` holds (polled every 10 ms), rejects after `waitMs`. */
async function until(done: () => boolean, what: string, waitMs = 5000): Promise<void> {
  for (const end = Date.now() + waitMs; !done();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('redteam9: in-flight responses are a count (7252f7e): it must neither stick nor go negative', () => {
  it.each([
    ['before shutdown', false],
    ['while shutdown waits for them', true],
  ])(
    'attack: pipelined requests behind a hung one, the client leaves %s: shutdown does not wait for them',
    async (_label, leaveDuring) => {
      const rig = await startRig();
      try {
        // One connection, three requests written at once: node runs the handler of each at once, and
        // queues the responses of the second and third behind the first (HTTP/1.1 pipelining).
        const { headers, connection } = await pipelineBehindHang(rig);
        const mark = rig.upstream.requests.length;
        connection.write(
          Buffer.concat(
            ['hang', 'p2', 'p3'].map((text) =>
              rawPost(rig.endpoint, JSON.stringify(callRequest(text, 'echo', { text })), headers),
            ),
          ),
        );
        // The gateway may list first (its own tools/list); the three calls all reach the upstream.
        const calls = (): number =>
          rig.upstream.requests.slice(mark).filter((r) => r.messages[0]?.method === 'tools/call').length;
        await until(() => calls() === 3, 'the three calls upstream');
        // p2 and p3 are answered by the upstream; their responses wait behind the hung one.
        await until(() => rig.upstream.executed.length >= 2, 'p2 and p3 executed');
        // Left before: nothing of that connection is in flight any more. Left during: the wait ends
        // when the connection closes, with the requests queued on it.
        const closing = leaveDuring ? rig.gateway.running.close({ graceMs: 4000 }) : undefined;
        if (leaveDuring) await until(() => rig.gateway.events('gateway.draining').length > 0, 'draining');
        connection.close();
        await connection.whenClosed();
        await (closing ?? rig.gateway.running.close({ graceMs: 4000 }));
        expect(rig.gateway.events('gateway.draining')).toEqual([
          expect.objectContaining({ inflight: leaveDuring ? 3 : expect.any(Number) }),
        ]);
        expect(rig.gateway.events('gateway.drain_timeout')).toEqual([]);
      } finally {
        await rig.close().catch(() => undefined);
      }
    },
  );
});

/** An SSE event carrying one JSON-RPC value. */
function sse(value: unknown): string {
  return `event: message\ndata: ${JSON.stringify(value)}\n\n`;
}

/** The echo tool's answer to a call. */
function echoAnswer(id: unknown, text: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } };
}

/** How the churn upstream answers a call, by the prefix of its text. */
type Fate = 'ok' | 'late' | 'sse' | 'hang' | 'silent' | 'stall' | 'nobody';
const ANSWERED: readonly Fate[] = ['ok', 'late', 'sse'];
const FATES: readonly Fate[] = ['ok', 'hang', 'sse', 'silent', 'late', 'stall', 'nobody'];

/** Answers a call as its fate says; the delays stay well inside the gateway's 400 ms limits. */
function answerByFate(res: ServerResponse, id: unknown, text: string): void {
  const fate = text.split('-')[0] as Fate;
  const delay = (Number(text.split('-')[1]) * 37) % 150;
  if (fate === 'hang') return hangForever(res);
  if (fate === 'late') {
    setTimeout(() => answerJson(res, echoAnswer(id, text)), delay);
  } else if (fate === 'sse' || fate === 'silent') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': primed\n\n');
    if (fate === 'sse') setTimeout(() => res.end(sse(echoAnswer(id, text))), delay);
  } else if (fate === 'stall') {
    const body = JSON.stringify(echoAnswer(id, text));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.write(body.slice(0, 20));
  } else if (fate === 'nobody') {
    res.writeHead(200);
    res.flushHeaders();
  } else answerJson(res, echoAnswer(id, text));
}

describe('redteam9: a response queued behind a hung one when the client leaves (pipelining)', () => {
  it('attack: a listening stream pipelined behind a hung call: the upstream stream and the stream gauge go with the client', async () => {
    const rig = await startRig();
    try {
      const { headers, connection } = await pipelineBehindHang(rig);
      connection.write(
        Buffer.concat([
          rawPost(rig.endpoint, JSON.stringify(callRequest('hang', 'echo', { text: 'hang' })), headers),
          rawRequest('GET', rig.endpoint, [['Accept', 'text/event-stream'], ...headers]),
        ]),
      );
      const upstreamStream = await rig.upstream.waitForGetStream();
      connection.close();
      await connection.whenClosed();
      // The client is gone: the gateway drops the upstream stream it opened for it.
      await until(
        () => upstreamStream.destroyed || upstreamStream.writableEnded,
        'the upstream GET stream closed',
      );
      const metrics = await (await fetch(`${rig.gateway.running.adminUrl}/metrics`)).text();
      const open = metrics.split('\n').filter((line) => line.startsWith('toolpin_sse_streams_open{'));
      expect(open.filter((line) => !line.endsWith(' 0'))).toEqual([]);
    } finally {
      await rig.close().catch(() => undefined);
    }
  });
});

describe('redteam9: deadlines on the LiveList wheel under churn (7252f7e)', () => {
  const rig = useSessionRig({ gateway: { limits: { upstreamTimeoutMs: 400, streamIdleMs: 400 } } });

  beforeAll(() => {
    rig.upstream.behaviour = ({ res, message }) => {
      const text = callText(message);
      if (text === undefined) return false;
      answerByFate(res, message.id, text);
      return true;
    };
  });

  /** Sends one call per fate and index at once; checks each got what its fate says. */
  async function round(tag: string, count: number): Promise<void> {
    const texts = Array.from({ length: count }, (_, i) => `${FATES[i % FATES.length]}-${i}-${tag}`);
    // The bound is the test's: ten times the gateway's limits.
    const replies = await Promise.all(
      texts.map((text) => postJson(rig.endpoint, callRequest(text, 'echo', { text }), rig.session, 5000)),
    );
    texts.forEach((text, i) => {
      const answer = responseTo(replies[i]!.body, text);
      if (ANSWERED.includes(text.split('-')[0] as Fate))
        expect(answer).toEqual(expect.objectContaining({ result: echoAnswer(text, text).result }));
      else
        expect(answer).toEqual(
          expect.objectContaining({
            error: expect.objectContaining({
              code: -32041,
              data: expect.objectContaining({ reason: 'timeout' }),
            }),
          }),
        );
    });
  }

  it('attack: answered, hung, silent-SSE, stalled-body and bodiless exchanges at once: every deadline fires, none early', async () => {
    await round('a', 42);
    // The wheel stopped with nothing armed: a second round starts it again, with links reused.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await round('b', 21);
    // Every relayed stream (answered, or ended by its deadline) left the open-stream registry.
    const metrics = await (await fetch(`${rig.gateway.running.adminUrl}/metrics`)).text();
    const open = metrics.split('\n').filter((line) => line.startsWith('toolpin_sse_streams_open{'));
    expect(open.filter((line) => !line.endsWith(' 0'))).toEqual([]);
  });
});

describe('redteam9: the LiveList and the wheel on it, driven directly (7252f7e)', () => {
  interface Member extends ListMember<Member> {
    readonly n: number;
  }

  it('attack: any sequence of adds, re-adds, removes of head, middle, tail and strangers keeps the list a set in newest-first order', () => {
    const op = fc.oneof(
      fc.record({ add: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ remove: fc.integer({ min: 0, max: 7 }) }),
      fc.record({ removeWhileWalking: fc.integer({ min: 0, max: 7 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const members: Member[] = Array.from({ length: 8 }, (_, n) => ({
          listPrev: null,
          listNext: null,
          listed: false,
          n,
        }));
        const list = new LiveList<Member>();
        let model: number[] = [];
        for (const step of ops) {
          if ('add' in step) {
            list.add(members[step.add]!);
            if (!model.includes(step.add)) model = [step.add, ...model];
          } else if ('remove' in step) {
            list.remove(members[step.remove]!);
            model = model.filter((n) => n !== step.remove);
          } else {
            // What the wheel does: gather, then remove while acting on each.
            for (const member of list.filter((m) => m.n >= step.removeWhileWalking)) list.remove(member);
            model = model.filter((n) => n < step.removeWhileWalking);
          }
          expect(list.filter(() => true).map((m) => m.n)).toEqual(model);
          expect(list.size).toBe(model.length);
          for (const member of members) {
            expect(member.listed).toBe(model.includes(member.n));
            if (!member.listed) expect([member.listPrev, member.listNext]).toEqual([null, null]);
          }
        }
      }),
      { numRuns: 80 },
    );
  });

  it("attack: deadlines disarmed, re-armed and armed from inside another's onDeadline in the same tick", async () => {
    let now = 0;
    // shortestMs 80: one tick every 5 ms of real time; deadlines are read on `now` alone.
    const wheel = new DeadlineWheel(80, () => now);
    const fired: string[] = [];
    const deadlines: Record<string, ReturnType<typeof newDeadline>> = {};
    const make = (name: string, action: () => void = () => undefined): void => {
      deadlines[name] = newDeadline(() => {
        fired.push(name);
        action();
      });
    };
    let again = true;
    // Armed b, c, d, then a: the list holds them newest first (a, d, c, b), so a acts first, on the
    // tail (b) and the middle (c) of what its tick gathered.
    make('a', () => {
      wheel.disarm(deadlines.b!); // gathered with a (the tail): must not fire
      wheel.arm(deadlines.c!, 100); // gathered (the middle), then re-armed for later: not now
      wheel.arm(deadlines.e!, 0); // new: the next tick
      if (again) wheel.arm(deadlines.a!, 0); // itself, once more: the next tick
      again = false;
    });
    make('b');
    make('c');
    make('d', () => wheel.disarm(deadlines.d!)); // disarming itself while firing: harmless
    make('e');
    for (const name of ['b', 'c', 'd', 'a']) wheel.arm(deadlines[name]!, 10);
    now = 10;
    await until(() => fired.length >= 4, 'the first deadlines', 2000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect([...fired].sort()).toEqual(['a', 'a', 'd', 'e']);
    now = 110;
    await until(() => fired.length >= 5, 'the re-armed deadline', 2000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fired.slice(4)).toEqual(['c']);
    // Nothing is left armed: every deadline is unlinked.
    for (const deadline of Object.values(deadlines))
      expect([deadline.listed, deadline.listPrev, deadline.listNext]).toEqual([false, null, null]);
  });
  it('attack: streams ended by shutdown, then unregistered by their close; one unregistering another while ending', () => {
    const streams = new OpenStreams();
    const ended: string[] = [];
    const unregister: Record<string, () => void> = {};
    const open = (
      name: string,
      kind: 'listen' | 'response',
      server: string,
      onEnd = (): void => undefined,
    ): void => {
      unregister[name] = streams.add({
        server,
        kind,
        end: () => {
          ended.push(name);
          onEnd();
        },
      });
    };
    open('get-a', 'listen', 'a');
    open('resp-a', 'response', 'a');
    // Ended first (newest first), it unregisters resp-a, gathered with it.
    open('resp-b', 'response', 'b', () => unregister['resp-a']!());
    open('get-b', 'listen', 'b', () => open('late', 'listen', 'b'));
    expect(streams.end('listen')).toBe(2);
    // A stream opened while ending is not ended by that call; the ended ones' close unregisters them again.
    expect(ended.sort()).toEqual(['get-a', 'get-b']);
    unregister['get-a']!();
    unregister['get-b']!();
    expect([streams.size, Object.fromEntries(streams.countByServer())]).toEqual([3, { a: 1, b: 2 }]);
    // Each gathered stream is ended once, the count stays exact.
    expect(streams.end()).toBe(3);
    expect(ended.filter((name) => name.startsWith('resp')).sort()).toEqual(['resp-a', 'resp-b']);
    for (const name of Object.keys(unregister)) unregister[name]!();
    expect([streams.size, streams.countByServer().size]).toEqual([0, 0]);
    open('after', 'response', 'a');
    expect([streams.size, streams.end(), streams.size]).toEqual([1, 1, 0]);
  });
});

describe('redteam9: graceful shutdown with streams of both kinds and requests in flight (7252f7e)', () => {
  it('attack: a listening stream, a silent response stream, a hung call, a finishing call and a request sent while draining', async () => {
    const rig = await startRig({ gateway: { limits: { upstreamTimeoutMs: 20_000, streamIdleMs: 20_000 } } });
    const connections: RawConnection[] = [];
    try {
      rig.upstream.behaviour = ({ res, message }) => {
        const text = callText(message);
        if (text === undefined) return false;
        if (text === 'late') setTimeout(() => answerJson(res, echoAnswer(message.id, text)), 150);
        else answerByFate(res, message.id, text);
        return true;
      };
      const session = await openSession(rig.endpoint);
      const headers = Object.entries(session);
      const open = async (bytes: Buffer): Promise<RawConnection> => {
        const connection = await RawConnection.open(rig.endpoint);
        connections.push(connection);
        connection.write(bytes);
        return connection;
      };
      const call = (text: string): Buffer =>
        rawPost(rig.endpoint, JSON.stringify(callRequest(text, 'echo', { text })), headers);
      const listening = await open(
        rawRequest('GET', rig.endpoint, [['Accept', 'text/event-stream'], ...headers]),
      );
      await rig.upstream.waitForGetStream();
      const silent = await open(call('silent-1'));
      const hung = await open(call('hang-1'));
      await listening.waitFor((c) => c.responses[0] !== undefined, 'the listening stream head');
      await silent.waitFor((c) => c.responses[0] !== undefined, 'the response stream head');
      const late = await open(call('late'));
      await until(() => rig.upstream.requests.some((r) => callText(r.messages[0] ?? {}) === 'late'), 'late');
      const closing = rig.gateway.running.close({ graceMs: 700 });
      // Written once draining began, on a connection busy with `late`: refused with 503 after it.
      late.write(call('after-drain'));
      await listening.response(0);
      // The listening stream ended at once, cleanly; the response stream still owes its answer.
      expect(silent.responses[0]?.complete).toBe(false);
      await closing;
      expect(responseTo((await late.response(0)).body, 'late')).toEqual(
        expect.objectContaining({ result: echoAnswer('late', 'late').result }),
      );
      const refused = await late.response(1);
      expect([refused.status, JSON.parse(refused.body).error]).toEqual([503, 'shutting_down']);
      // The response stream ended when the grace ran out, cleanly (the end of its body), the hung
      // call's connection closed without an answer.
      await silent.whenClosed();
      expect(silent.responses[0]?.status).toBe(200);
      expect(silent.received).toMatch(/0\r\n\r\n$/);
      await hung.whenClosed();
      expect(hung.responses).toEqual([]);
      expect(rig.gateway.events('gateway.draining')).toEqual([
        expect.objectContaining({ streamsEnded: 1, inflight: 4 }),
      ]);
      // Exactly the silent stream and the hung call were still in flight: the count is exact.
      expect(rig.gateway.events('gateway.drain_timeout')).toEqual([expect.objectContaining({ forced: 2 })]);
    } finally {
      for (const connection of connections) connection.close();
      await rig.close().catch(() => undefined);
    }
  });
});

describe("redteam9: the SSE relay completes the upstream's headers object in place (74940b6)", () => {
  const rig = useSessionRig();
  // Names that collide with what the relay sets, framing and representation headers, hop-by-hop
  // ones (and one the Connection header names), duplicates, and names of Object.prototype members.
  const HOSTILE: readonly (readonly [string, string])[] = [
    ['Content-Type', 'text/event-stream'],
    ['Content-Type', 'application/json'],
    ['X-Accel-Buffering', 'yes'],
    ['x-accel-buffering', 'yes'],
    ['Content-Encoding', 'gzip'],
    ['Content-Location', '/elsewhere'],
    ['Connection', 'keep-alive, X-Hop'],
    ['X-Hop', 'hop-secret'],
    ['Keep-Alive', 'timeout=77'],
    ['Trailer', 'X-Late'],
    ['Access-Control-Allow-Origin', '*'],
    ['__proto__', 'polluted'],
    ['constructor', 'polluted'],
    ['hasOwnProperty', 'polluted'],
    ['toString', 'polluted'],
    ['Set-Cookie', 'a=1'],
    ['Set-Cookie', 'b=2'],
    ['X-Upstream-Kept', 'kept'],
  ];

  /** Answers the call with exact bytes: the hostile head, then one chunked event. */
  function answerHostile(res: ServerResponse, id: unknown, text: string, sseBody: boolean): void {
    const body = sseBody ? sse(echoAnswer(id, text)) : JSON.stringify(echoAnswer(id, text));
    const head = HOSTILE.map(([name, value]): readonly [string, string] =>
      name === 'Content-Type' && !sseBody ? [name, 'application/json'] : [name, value],
    );
    const size = Buffer.byteLength(body).toString(16);
    writeRawResponse(
      res,
      `${rawHead('200 OK', [...head, ['Transfer-Encoding', 'chunked']])}${size}\r\n${body}\r\n0\r\n\r\n`,
    );
  }

  it('attack: colliding, framing, hop-by-hop and prototype-named headers: the client gets the gateway framing alone', async () => {
    rig.upstream.behaviour = ({ res, message }) => {
      const text = callText(message);
      if (text === undefined) return false;
      answerHostile(res, message.id, text, text.startsWith('sse'));
      return true;
    };
    for (const text of ['sse-1', 'json-1', 'sse-2', 'sse-3']) {
      const reply = await postJson(rig.endpoint, callRequest(text, 'echo', { text }), rig.session);
      expect(responseTo(reply.body, text)).toEqual(
        expect.objectContaining({ result: echoAnswer(text, text).result }),
      );
      const named = (name: string): string[] =>
        reply.headers.filter(([key]) => key === name).map(([, value]) => value);
      const type = text.startsWith('sse') ? 'text/event-stream' : 'application/json';
      expect(named('content-type').map((value) => value.split(';')[0])).toEqual([type]);
      // A stream is never buffered on the way, whatever the upstream asked (a JSON body: its header).
      if (text.startsWith('sse')) expect(named('x-accel-buffering')).toEqual(['no']);
      // The gateway frames the body itself: one framing header, its own.
      expect(named('transfer-encoding').length + named('content-length').length).toBe(1);
      expect(named('transfer-encoding')).not.toContain('chunked, chunked');
      for (const name of [
        'content-encoding',
        'content-location',
        'x-hop',
        'trailer',
        'access-control-allow-origin',
      ])
        expect([name, named(name)]).toEqual([name, []]);
      // Node's own Keep-Alive (timeout=5) may be there; the upstream's never.
      expect(named('keep-alive')).not.toContain('timeout=77');
      // Names of Object.prototype members are ordinary end-to-end headers: relayed once, as they
      // came; `__proto__` sets no prototype on the way.
      for (const name of ['constructor', 'hasownproperty', 'tostring'])
        expect([name, named(name)]).toEqual([name, ['polluted']]);
      expect(named('__proto__').length).toBeLessThanOrEqual(1);
      expect(named('x-upstream-kept')).toEqual(['kept']);
      expect(named('set-cookie')).toEqual(['a=1', 'b=2']);
    }
    // Nothing of the upstream's names reached a shared prototype.
    const probe: Record<string, unknown> = {};
    expect([probe.polluted, typeof probe.constructor, typeof probe.hasOwnProperty]).toEqual([
      undefined,
      'function',
      'function',
    ]);
  });
});

/** One request a {@link RawUpstream} read: its declared length and the bytes that followed the head. */
interface RawUpstreamRequest {
  readonly contentLength: number;
  readonly chunked: boolean;
  readonly body: Buffer;
}

/** An MCP upstream on node:net that frames every request by its Content-Length, byte for byte. */
interface RawUpstream {
  readonly url: string;
  readonly requests: RawUpstreamRequest[];
  /** Bytes where a request line should have started (a Content-Length that lied), per connection. */
  readonly framingErrors: string[];
  close(): Promise<void>;
}

/** The answer of the raw upstream to one message: echo returns its arguments' JSON. */
function rawAnswer(message: Record<string, unknown>): Buffer {
  const answer = (result: unknown): string => JSON.stringify({ jsonrpc: '2.0', id: message.id, result });
  let body: string;
  if (message.id === undefined) return Buffer.from('HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n');
  if (message.method === 'initialize')
    body = answer({
      protocolVersion: '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 'raw-net', version: '1.0.0' },
    });
  else if (message.method === 'tools/list') body = answer({ tools: PINNED_TOOLS });
  else {
    const args = (message.params as { arguments?: unknown } | undefined)?.arguments;
    body = answer({ content: [{ type: 'text', text: JSON.stringify(args) }] });
  }
  const bytes = Buffer.from(body);
  return Buffer.concat([
    Buffer.from(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`,
    ),
    bytes,
  ]);
}

/** Reads requests off one connection, each exactly as long as its Content-Length says. */
function serveRawConnection(socket: Socket, upstream: RawUpstream): void {
  let buffer = Buffer.alloc(0);
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (let guard = 0; guard < 1000; guard++) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
      if (!/^(POST|GET|DELETE) \S+ HTTP\/1\.1$/.test(lines[0] ?? '')) {
        upstream.framingErrors.push(buffer.subarray(0, 40).toString('latin1'));
        return void socket.destroy();
      }
      const header = (name: string): string | undefined =>
        lines
          .find((line) => line.toLowerCase().startsWith(`${name}:`))
          ?.split(':')[1]
          ?.trim();
      const contentLength = Number(header('content-length') ?? 0);
      if (buffer.length < end + 4 + contentLength) return;
      const body = buffer.subarray(end + 4, end + 4 + contentLength);
      buffer = buffer.subarray(end + 4 + contentLength);
      upstream.requests.push({ contentLength, chunked: header('transfer-encoding') !== undefined, body });
      if (!lines[0]!.startsWith('POST')) {
        socket.write('HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n');
        continue;
      }
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        upstream.framingErrors.push(`unparseable body: ${body.subarray(0, 40).toString('latin1')}`);
        return void socket.destroy();
      }
      socket.write(rawAnswer(message));
    }
  });
}

async function startRawUpstream(): Promise<RawUpstream> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    serveRawConnection(socket, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const upstream: RawUpstream = {
    url: `http://127.0.0.1:${port}/mcp`,
    requests: [],
    framingErrors: [],
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return upstream;
}

describe('redteam9: the upstream body is a string, measured by Buffer.byteLength (74940b6)', () => {
  const chain = useScoped(async () => rigAround(await startRawUpstream()));

  // Exact client bodies: escapes the gateway decodes to lone surrogates, NUL, line separators;
  // two-, three- and four-byte UTF-8; a body past 64 KiB of four-byte characters.
  const BODIES: readonly string[] = [
    String.raw`{"text":"lone \ud800 high, lone \udfff low, reversed \udc00\ud800, NUL \u0000, LS \u2028 PS \u2029"}`,
    JSON.stringify({ text: 'héllo — 日本語 🧪🔥 "quoted" \\ back\\slash', n: 1 }),
    JSON.stringify({ text: '\u{1F600}'.repeat(20_000), more: 'é'.repeat(3) }),
    JSON.stringify({ text: 'ascii only', nested: { k: ['ü', '\u{10FFFF}', '\uFEFF'] } }),
  ];

  it('attack: non-ASCII, emoji and lone-surrogate arguments arrive byte-exact under a Content-Length that tells the truth', async () => {
    const session = await openSession(chain.endpoint);
    const mark = chain.upstream.requests.length;
    for (const [i, args] of BODIES.entries()) {
      const id = `u${i}`;
      const body = `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"echo","arguments":${args}}}`;
      // fetch reads the answer whole (the raw client decodes chunk by chunk).
      const reply = await postRaw(chain.endpoint, body, session);
      const answer = reply.messages[0] as { result?: { content: { text: string }[] } } | undefined;
      // What the upstream decoded from the bytes it framed is what the client sent.
      const echoed = answer?.result?.content[0]?.text ?? 'null';
      expect(echoed === JSON.stringify(JSON.parse(args))).toBe(true);
    }
    const calls = chain.upstream.requests
      .slice(mark)
      .filter((request) => request.body.includes('tools/call'));
    expect(calls).toHaveLength(BODIES.length);
    for (const [i, call] of calls.entries()) {
      expect(call.chunked).toBe(false);
      expect(call.body.length).toBe(call.contentLength);
      expect(isUtf8(call.body)).toBe(true);
      const sent = JSON.parse(call.body.toString('utf8')) as { params: { arguments: unknown } };
      expect(sent.params.arguments).toEqual(JSON.parse(BODIES[i]!));
    }
    expect(chain.upstream.framingErrors).toEqual([]);
  });
});

describe('redteam9: the length prefilter of the listing replay (9bd4cdd)', () => {
  const rig = useRig();
  const description = String(ECHO.description);
  // The verified listing, one a byte shorter, one as long with a byte changed, one a byte longer.
  const VARIANTS: Readonly<Record<string, Record<string, unknown>>> = {
    pinned: ECHO,
    shorter: { ...ECHO, description: description.slice(0, -1) },
    flipped: { ...ECHO, description: `${description.slice(0, -1)}${description.endsWith('X') ? 'Y' : 'X'}` },
    longer: { ...ECHO, description: `${description} ` },
  };
  let served = 'pinned';
  let sseAnswers = false;

  beforeAll(() => {
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/list') return false;
      const answer = { jsonrpc: '2.0', id: message.id, result: { tools: [VARIANTS[served]] } };
      if (!sseAnswers) answerJson(res, answer);
      else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(sse(answer));
      }
      return true;
    };
  });

  /** Lists in the session as the upstream serves `variant`; what was logged and what the client got. */
  async function list(session: Record<string, string>, variant: string, id: string) {
    served = variant;
    const mark = rig.gateway.logs.length;
    const reply = await postJson(rig.endpoint, listRequest(id), session);
    const logged = rig.gateway.logs.slice(mark);
    const tools = (responseTo(reply.body, id)?.result as { tools?: Record<string, unknown>[] } | undefined)
      ?.tools;
    const before = rig.upstream.executed.length;
    await postJson(rig.endpoint, callRequest(`${id}-call`, 'echo', { text: id }), session);
    return {
      verified: logged.some((line) => line.event === 'catalog.verified'),
      drift: logged.some((line) => line.event === 'catalog.drift'),
      descriptions: (tools ?? []).map((tool) => tool.description),
      ran: rig.upstream.executed.length > before,
    };
  }

  it.each([
    ['a JSON body', false],
    ['an SSE event', true],
  ])(
    'attack (%s): a listing a byte shorter, a byte flipped, a byte longer than the verified one, each replayed: never taken for it',
    async (_label, sseBody) => {
      sseAnswers = sseBody;
      const session = await openSession(rig.endpoint);
      const pinned = { verified: true, drift: false, descriptions: [description], ran: true };
      expect(await list(session, 'pinned', 'v1')).toEqual(pinned);
      // Replayed (the same bytes, remembered): the same verdict.
      expect(await list(session, 'pinned', 'v2')).toEqual(pinned);
      for (const variant of ['shorter', 'flipped', 'longer'])
        for (const round of [1, 2]) {
          const found = await list(session, variant, `${variant}-${round}`);
          // The altered definition never reaches the client, and echo is not called under it.
          expect([variant, found.verified, found.drift, found.ran]).toEqual([variant, false, true, false]);
          expect(found.descriptions.filter((text) => text !== description)).toEqual([]);
          // The pinned listing, again: recognized as before.
          expect(await list(session, 'pinned', `${variant}-${round}-back`)).toEqual(pinned);
        }
    },
  );

  it('attack: a reload between: the bytes verified under the old pin are judged again under the new one', async () => {
    sseAnswers = false;
    const session = await openSession(rig.endpoint);
    expect((await list(session, 'pinned', 'r1')).verified).toBe(true);
    // The new pin approves the one-byte-shorter definition only.
    await writeFile(
      join(rig.gateway.dir, 'servers', `${SERVER}.json`),
      JSON.stringify(pinFor(SERVER, rig.upstream.url, [VARIANTS.shorter!])),
    );
    await rig.gateway.running.reload();
    const old = await list(session, 'pinned', 'r2');
    expect([old.verified, old.drift, old.ran]).toEqual([false, true, false]);
    const now = await list(session, 'shorter', 'r3');
    expect([now.verified, now.ran]).toEqual([true, true]);
    // And back: the pin in force decides, never the bytes remembered under another.
    await writeFile(
      join(rig.gateway.dir, 'servers', `${SERVER}.json`),
      JSON.stringify(pinFor(SERVER, rig.upstream.url, PINNED_TOOLS)),
    );
    await rig.gateway.running.reload();
    const shorter = await list(session, 'shorter', 'r4');
    expect([shorter.verified, shorter.drift, shorter.ran]).toEqual([false, true, false]);
    expect((await list(session, 'pinned', 'r5')).verified).toBe(true);
  });
});
