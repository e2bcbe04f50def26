import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  fullCollection,
  IdleHeapRelease,
  type HeapRelease,
  type ProcessSample,
} from '../../packages/gateway/dist/observe/idleHeapRelease.js';
import fc from 'fast-check';
import { deepFreeze } from '../../packages/gateway/dist/config/deepFreeze.js';
import {
  inspectToolsPage,
  type PageInspection,
} from '../../packages/gateway/dist/policy/inspectToolsPage.js';
import type { PinView } from '../../packages/gateway/dist/policy/pinView.js';
import { SessionCatalog } from '../../packages/gateway/dist/state/sessionCatalog.js';
import { ToolDigester } from '../../packages/gateway/dist/state/toolDigester.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest } from '../support/rawMcp.js';
import { answerJson } from './support/maliciousUpstream.js';
import { responseTo } from './support/lenientRead.js';
import { ECHO, EVIL } from './support/tools.js';
import { listRequest, openSession, postJson, SERVER, useRig } from './support/rig.js';

// Red team 8: the one-page judgement cached per inspection and pin (8ee2438), the idle heap release
// of `toolpin serve` (bc40699, 6bfe9e9) and the deadline wheel's injectable clock (1442140).

/** A second tool a reloaded pin may approve (never served by the upstreams below). */
const EXTRA: Readonly<Record<string, unknown>> = {
  name: 'extra',
  description: 'Pinned, then no longer served.',
  inputSchema: { type: 'object', properties: {} },
};

describe('redteam8: a one-page listing judged once per inspection and pin (judgedPage, keysOf)', () => {
  const rig = useRig();
  /** tools/list answers: a name -> its pages (page i is asked with cursor `p<i>`). */
  let pages: readonly (readonly object[])[] = [[ECHO]];

  beforeEach(() => {
    pages = [[ECHO]];
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/list') return false;
      const cursor = (message.params as { cursor?: unknown } | undefined)?.cursor;
      const index = typeof cursor === 'string' ? Number(cursor.slice(1)) : 0;
      const result: Record<string, unknown> = { tools: pages[index] };
      if (index + 1 < pages.length) result.nextCursor = `p${index + 1}`;
      answerJson(res, { jsonrpc: '2.0', id: message.id, result });
      return true;
    };
  });

  /** Lists every page in the session; returns the catalog events the listing logged. */
  async function list(session: Record<string, string>, tag: string): Promise<Record<string, unknown>[]> {
    const mark = rig.gateway.logs.length;
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      const id = `${tag}-${page}`;
      const request = listRequest(id);
      if (cursor !== undefined) request.params = { cursor };
      const reply = await postJson(rig.endpoint, request, session);
      const result = responseTo(reply.body, id)?.result as { nextCursor?: string } | undefined;
      cursor = result?.nextCursor;
      if (cursor === undefined) break;
    }
    return rig.gateway.logs
      .slice(mark)
      .filter((line) => line.event === 'catalog.verified' || line.event === 'catalog.drift');
  }

  const kinds = (events: Record<string, unknown>[]): string[] =>
    events.flatMap((event) =>
      event.event === 'catalog.verified'
        ? ['verified']
        : ((event.drift as { kind: string; key: string }[] | undefined) ?? []).map(
            (finding) => `${finding.kind} ${finding.key}`,
          ),
    );

  /** Calls echo; true when the upstream executed it. */
  async function echoRuns(session: Record<string, string>, tag: string): Promise<boolean> {
    const before = rig.upstream.executed.length;
    await postJson(rig.endpoint, callRequest(tag, 'echo', { text: tag }), session);
    return rig.upstream.executed.length > before;
  }

  async function repin(tools: readonly object[]): Promise<void> {
    const pin = pinFor(SERVER, rig.upstream.url, tools);
    await writeFile(join(rig.gateway.dir, 'servers', `${SERVER}.json`), JSON.stringify(pin));
    await rig.gateway.running.reload();
  }

  it('attack: reloads between replays of one listing: each pin judges the same bytes by its own keys', async () => {
    const session = await openSession(rig.endpoint);
    expect(kinds(await list(session, 'a1'))).toEqual(['verified']);
    expect(kinds(await list(session, 'a2'))).toEqual(['verified']);
    // The pin now also approves `extra`, which the upstream never serves: the same listing bytes
    // (the same remembered inspection once verified under this pin) must report it removed.
    await repin([ECHO, EXTRA]);
    for (const tag of ['b1', 'b2', 'b3'])
      expect(kinds(await list(session, tag))).toEqual(['removed tool:extra']);
    expect(await echoRuns(session, 'b-call')).toBe(true);
    // Back to the first pin: the judgement cached under the reloaded pin is not the one reused.
    await repin([ECHO]);
    for (const tag of ['c1', 'c2']) expect(kinds(await list(session, tag))).toEqual(['verified']);
    // A pin naming only `extra`: the one-page listing of echo names none of it (wrong_subject).
    await repin([EXTRA]);
    for (const tag of ['d1', 'd2']) expect(kinds(await list(session, tag))).toContain('wrong_subject *');
    expect(await echoRuns(session, 'd-call')).toBe(false);
    await repin([ECHO]);
    expect(kinds(await list(session, 'e1'))).toEqual(['verified']);
    expect(await echoRuns(session, 'e-call')).toBe(true);
  });

  it('attack: a wrong-subject page replayed as the last page of a two-page listing is judged with the first page', async () => {
    const session = await openSession(rig.endpoint);
    // One page of evil alone: none of the pin, wrong_subject (twice: the second is a replay).
    pages = [[EVIL]];
    for (const tag of ['w1', 'w2']) expect(kinds(await list(session, tag))).toContain('wrong_subject *');
    expect(await echoRuns(session, 'w-call')).toBe(false);
    // The same bytes as the last page after a page of echo: the listing names echo, no wrong_subject.
    pages = [[ECHO], [EVIL]];
    for (const tag of ['s1', 's2']) {
      const found = kinds(await list(session, tag));
      expect(found).not.toContain('wrong_subject *');
      expect(found.some((kind) => kind.endsWith('tool:evil'))).toBe(true);
      expect(await echoRuns(session, `${tag}-call`)).toBe(true);
    }
    // The upstream serves the pinned catalog, then swaps its one page back to evil.
    pages = [[ECHO]];
    expect(kinds(await list(session, 'p1'))).toEqual(['verified']);
    expect(await echoRuns(session, 'p-call')).toBe(true);
    pages = [[EVIL]];
    expect(kinds(await list(session, 'x1'))).toContain('wrong_subject *');
    expect(await echoRuns(session, 'x-call')).toBe(false);
    // The first page replayed as a later page (echo after evil): echo is named, the pin's key seen.
    pages = [[EVIL], [ECHO]];
    const found = kinds(await list(session, 'r1'));
    expect(found).not.toContain('wrong_subject *');
    expect(found).not.toContain('removed tool:echo');
  });

  it('attack: one page naming a pinned tool twice (same and different definitions), replayed: judged alike each time', async () => {
    const session = await openSession(rig.endpoint);
    pages = [[ECHO, ECHO]];
    for (const tag of ['t1', 't2'])
      expect(kinds(await list(session, tag))).not.toContain('removed tool:echo');
    pages = [[ECHO, { ...ECHO, description: 'another definition under the same name' }]];
    for (const tag of ['u1', 'u2']) {
      const found = kinds(await list(session, tag));
      expect(found).not.toContain('verified');
      expect(found).not.toContain('removed tool:echo');
      expect(await echoRuns(session, `${tag}-call`)).toBe(false);
    }
  });
});

describe('redteam8: trust on first use, then the trusted listing replayed and swapped', () => {
  const rig = useRig({ pin: { pin: 'trust-on-first-use', definitions: undefined } });
  let served: readonly object[] = [ECHO];

  beforeAll(() => {
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/list') return false;
      answerJson(res, { jsonrpc: '2.0', id: message.id, result: { tools: served } });
      return true;
    };
  });

  async function listThenCall(tag: string): Promise<{ wrongSubject: boolean; ran: boolean }> {
    const session = await openSession(rig.endpoint);
    const mark = rig.gateway.logs.length;
    await postJson(rig.endpoint, listRequest(`${tag}-l`), session);
    const wrongSubject = rig.gateway.logs
      .slice(mark)
      .some((line) => JSON.stringify(line.drift ?? []).includes('"wrong_subject"'));
    const before = rig.upstream.executed.length;
    await postJson(rig.endpoint, callRequest(`${tag}-c`, 'echo', { text: tag }), session);
    return { wrongSubject, ran: rig.upstream.executed.length > before };
  }

  it('attack: the first listing trusted, the same bytes replayed, then a page of none of it: refused each time it is served', async () => {
    expect(await listThenCall('first')).toEqual({ wrongSubject: false, ran: true });
    expect(await listThenCall('replayed')).toEqual({ wrongSubject: false, ran: true });
    served = [EVIL];
    for (const tag of ['swapped', 'swapped-replayed'])
      expect(await listThenCall(tag)).toEqual({ wrongSubject: true, ran: false });
    served = [ECHO];
    expect(await listThenCall('back')).toEqual({ wrongSubject: false, ran: true });
    expect(rig.upstream.executed.filter((name) => name !== 'echo')).toEqual([]);
  });
});

describe('redteam8: the cached judgement against the catalog it stands for (property)', () => {
  // Definitions whose names collide in the catalog's by-name map and in their keys: '' and a
  // missing or non-string name are all `tool:unnamed`; echo twice with two definitions.
  const POOL: readonly unknown[] = [
    ECHO,
    { ...ECHO, description: 'echo, redefined' },
    EXTRA,
    EVIL,
    { ...EXTRA, name: '' },
    { ...EXTRA, name: 42 },
    { description: 'no name', inputSchema: { type: 'object' } },
    7,
  ];
  const digester = new ToolDigester();
  const viewOf = (tools: readonly object[], frozen: boolean): PinView => {
    const view = { ...pinFor(SERVER, 'http://127.0.0.1:9/mcp', tools), extraMembers: {} };
    return (frozen ? deepFreeze(view) : view) as unknown as PinView;
  };
  const PINS: readonly PinView[] = [
    viewOf([ECHO], true),
    viewOf([ECHO, EXTRA], true),
    viewOf([EXTRA], true),
    viewOf([], true),
    viewOf([ECHO, EXTRA], false),
  ];
  // Inspections made once and handed to many catalogs and pins, as replays share them.
  const INSPECTIONS = new Map<string, PageInspection>();
  const inspectionOf = (pinIndex: number, items: readonly number[]): PageInspection => {
    const id = `${pinIndex}:${items.join(',')}`;
    let inspection = INSPECTIONS.get(id);
    if (inspection === undefined) {
      inspection = inspectToolsPage(
        PINS[pinIndex]!,
        items.map((index) => POOL[index]),
        digester,
      );
      INSPECTIONS.set(id, inspection);
    }
    return inspection;
  };

  /** What the uncached code decided: the pin's own keys against the keys of the catalog served. */
  function expected(catalog: SessionCatalog, pin: PinView): { removed: string[]; wrongSubject: boolean } {
    const observed = new Set([...catalog.tools.values()].map((tool) => tool.key));
    const pinned = Object.keys(pin.pin.tools);
    return {
      removed: pinned.filter((key) => !observed.has(key)),
      wrongSubject:
        observed.size > 0 &&
        pinned.length > 0 &&
        ![...observed].some((key) => Object.hasOwn(pin.pin.tools, key)),
    };
  }

  const step = fc.record({
    catalog: fc.nat({ max: 2 }),
    pin: fc.nat({ max: PINS.length - 1 }),
    inspectedUnder: fc.nat({ max: PINS.length - 1 }),
    items: fc.array(fc.nat({ max: POOL.length - 1 }), { maxLength: 4 }),
    first: fc.boolean(),
    last: fc.boolean(),
    // The pin that is not frozen gains or loses a key before the page (a loader that keeps one object).
    toggle: fc.boolean(),
  });
  const unfrozen = PINS[4]!.pin.tools as Record<string, string>;

  it('attack: listings of shared inspections, any pin, any page order: removed and wrong_subject as uncached', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        const catalogs = [new SessionCatalog(), new SessionCatalog(), new SessionCatalog()];
        for (const { catalog: index, pin: pinIndex, inspectedUnder, items, first, last, toggle } of steps) {
          if (toggle && Object.hasOwn(unfrozen, 'tool:evil')) delete unfrozen['tool:evil'];
          else if (toggle) unfrozen['tool:evil'] = 'sha256:0';
          const catalog = catalogs[index]!;
          const pin = PINS[pinIndex]!;
          const completion = catalog.addPage(pin, inspectionOf(inspectedUnder, items), first, last);
          if (completion === undefined) continue;
          const removed = completion.findings.filter((f) => f.kind === 'removed').map((f) => f.key);
          expect({ removed, wrongSubject: completion.wrongSubject }).toEqual(expected(catalog, pin));
          expect(catalog.wrongSubject).toBe(completion.wrongSubject);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('redteam8: the idle heap release', () => {
  it('attack: the process global never gains gc; a context made after a release has none either', () => {
    const gc = fullCollection();
    expect(typeof gc).toBe('function');
    gc();
    // The module's own process (not jest's context): a child imports it and runs a release.
    const script = [
      `const m = await import(${JSON.stringify(new URL('../../packages/gateway/dist/observe/idleHeapRelease.js', import.meta.url).href)});`,
      `const vm = await import('node:vm');`,
      `m.fullCollection()(); m.fullCollection()();`,
      `console.log(JSON.stringify([typeof globalThis.gc, vm.runInNewContext('typeof gc'), typeof m.fullCollection()]));`,
    ].join('\n');
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual(['undefined', 'undefined', 'function']);
  });

  /** A release driven by a scripted process: `busy[i]` ms of event-loop work before check i. */
  function drive(
    busy: readonly number[],
    heapBytes: () => number,
  ): { collections: number; releases: HeapRelease[] } {
    let activeMs = 0;
    let collections = 0;
    const releases: HeapRelease[] = [];
    const sample = (): ProcessSample => ({ activeMs, heapBytes: heapBytes() });
    const release = new IdleHeapRelease({
      sample,
      collect: () => {
        collections++;
      },
      onRelease: (done) => releases.push(done),
    });
    for (const ms of busy) {
      activeMs += ms;
      release.check();
    }
    return { collections, releases };
  }

  it('attack: bursts timed around the 2 s checks (busy, then exactly the quiet checks) for 10 minutes: a release per minute at most', () => {
    // The heap stays grown (a client that keeps it grown between bursts); every burst then goes
    // quiet just long enough for a release to start.
    let heap = 10 * 2 ** 20;
    const pattern: number[] = [];
    for (let i = 0; pattern.length < 300; i++) pattern.push(500, 0, 0, 0, 0, 0);
    const { collections, releases } = drive(pattern.slice(0, 300), () => (heap += 40 * 2 ** 20));
    // 300 checks of 2 s = 10 minutes: at most one release start per 30 checks, 3 collections each.
    expect(releases.length).toBeLessThanOrEqual(10);
    expect(collections).toBeLessThanOrEqual(30);
    expect(collections).toBeGreaterThan(0);
  });

  it('attack: traffic at just under the busy threshold never lets a release run twice within a minute', () => {
    const heap = 100 * 2 ** 20;
    let first = true;
    const { collections } = drive(
      Array.from({ length: 60 }, () => 39),
      () => {
        if (first) {
          first = false;
          return 10 * 2 ** 20;
        }
        return heap;
      },
    );
    // 60 checks = 2 minutes: two releases at most, three collections each.
    expect(collections).toBeLessThanOrEqual(6);
  });
});

describe('redteam8: requests in flight while a release holds the event loop', () => {
  const rig = useRig();

  it('attack: calls and pings at every stage of their exchange while full collections run: each answered under its own id', async () => {
    const gc = fullCollection();
    const session = await openSession(rig.endpoint);
    await postJson(rig.endpoint, listRequest('l'), session);
    const replies: Promise<{ id: string; body: string }>[] = [];
    for (let round = 0; round < 6; round++) {
      for (const id of [`c${round}`, `p${round}`]) {
        const body = id.startsWith('c')
          ? callRequest(id, 'echo', { text: `text-${id}` })
          : { jsonrpc: '2.0', id, method: 'ping' };
        replies.push(postJson(rig.endpoint, body, session).then((reply) => ({ id, body: reply.body })));
      }
      // A release as idleHeapRelease runs it: collections back to back on the event loop.
      for (let turn = 0; turn < round % 3; turn++) await new Promise((resolve) => setImmediate(resolve));
      gc();
      gc();
    }
    for (const { id, body } of await Promise.all(replies)) {
      const message = responseTo(body, id);
      expect(message?.error).toBeUndefined();
      if (id.startsWith('c')) expect(JSON.stringify(message?.result)).toContain(`text-${id}`);
      else expect(message?.result).toEqual({});
    }
  });
});

describe('redteam8: deadlines still fire with the production clock', () => {
  const rig = useRig({ gateway: { limits: { upstreamTimeoutMs: 300, streamIdleMs: 300 } } });

  it('attack: an upstream that never answers a call: the client gets the timeout, the next request is answered', async () => {
    const session = await openSession(rig.endpoint);
    await postJson(rig.endpoint, listRequest('l'), session);
    const held: (() => void)[] = [];
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      held.push(() => res.destroy());
      return true;
    };
    const reply = await postJson(rig.endpoint, callRequest('t', 'echo', { text: 'x' }), session, 5000);
    const error = responseTo(reply.body, 't')?.error as { code?: number } | undefined;
    expect(error?.code).toBe(-32041);
    rig.upstream.behaviour = undefined;
    const ping = await postJson(rig.endpoint, { jsonrpc: '2.0', id: 'p', method: 'ping' }, session);
    expect(responseTo(ping.body, 'p')?.result).toBeDefined();
    for (const end of held) end();
  });
});
