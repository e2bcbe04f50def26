import { sessionKeyOf } from '../../packages/gateway/dist/ingress/sessionKey.js';
import { SessionCatalog } from '../../packages/gateway/dist/state/sessionCatalog.js';
import type { PinView } from '../../packages/gateway/dist/policy/pinView.js';
import { startGatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest } from '../support/rawMcp.js';
import { useScoped } from '../support/useScoped.js';
import { answerJson, startMaliciousUpstream } from './support/maliciousUpstream.js';
import { responseTo } from './support/lenientRead.js';
import { PINNED_TOOLS } from './support/tools.js';
import { exchangeRaw, rawPost, RawConnection, rawRequest } from './support/rawClient.js';
import { listRequest, openSession, postJson, useRig, useSessionRig } from './support/rig.js';

// Red team 7: the hot-path trims of 73448d0, f105c7e and ab2dd7a (a Content-Type parsed once, the
// caller's headers collected with for...in, the checkpoint's one-entry store key, the pin's keys
// listed once per frozen pin, the SSE relay's owed ids and first-turn flush) decide as before.

const ping = (id: string): Record<string, unknown> => ({ jsonrpc: '2.0', id, method: 'ping' });

/** The JSON-RPC error of `id` in a JSON or SSE body, if any. */
function errorOf(body: string, id: string): Record<string, unknown> | undefined {
  return responseTo(body, id)?.error as Record<string, unknown> | undefined;
}

describe('redteam7: a client Content-Type is decided as itself, whatever was remembered before', () => {
  const rig = useSessionRig();

  // [value, accepted]: spellings of one media type, charsets, values content-type's parser throws on.
  const SPELLINGS: readonly (readonly [string, boolean])[] = [
    ['application/json', true],
    ['application/json; charset=utf-7', false],
    ['APPLICATION/JSON ;  CHARSET="Utf-8"', true],
    ['application/json; charset=UTF-7', false],
    ['application/json;charset=utf8', true],
    ['application/json; charset', false],
    ['application/json; charset=utf-8; charset=utf-7', false],
    ['application/json; charset="utf-7"', false],
    ['application/json; __proto__=x; charset=utf-7', false],
    ['application/json; constructor=x; hasOwnProperty=y', true],
    ['application/jsonx', false],
    ['text/event-stream', false],
    [`application/json; pad="${'x'.repeat(6000)}"`, true],
    [`application/json; pad="${'x'.repeat(6000)}"; charset=utf-7`, false],
  ];

  async function expectDecided(value: string, accepted: boolean, id: string): Promise<void> {
    const before = rig.upstream.requests.length;
    const reply = await exchangeRaw(
      rig.endpoint,
      rawPost(rig.endpoint, JSON.stringify(ping(id)), Object.entries(rig.session), value),
    );
    expect({ value: value.slice(0, 80), status: reply.status }).toEqual({
      value: value.slice(0, 80),
      status: accepted ? 200 : 415,
    });
    if (!accepted) expect(rig.upstream.requests.length).toBe(before);
  }

  it('attack: spellings that differ in case, spaces and parameters, interleaved: each gets its own decision', async () => {
    for (const [round, order] of [SPELLINGS, [...SPELLINGS].reverse()].entries())
      for (const [index, [value, accepted]] of order.entries())
        await expectDecided(value, accepted, `s-${round}-${index}`);
  });

  it('attack: the memo thrashed past its 64 values between a refused and an accepted spelling', async () => {
    for (let i = 0; i < 150; i++) {
      // Distinct values fill the memo (cleared at 64); the two probes land before and after each clear.
      await expectDecided(`application/json; n=${i}`, true, `t-${i}`);
      if (i % 16 === 0) {
        await expectDecided('application/json; charset=utf-7', false, `u-${i}`);
        await expectDecided('application/json; n=0', true, `v-${i}`);
      }
    }
  });
});

describe('redteam7: an upstream Content-Type is decided as itself, whatever was remembered before', () => {
  const rig = useSessionRig();

  // The upstream labels each tools/call answer as it is told: a UTF-7 label is refused, never relayed.
  const ANSWERS: readonly (readonly [string, boolean])[] = [
    ['application/json', true],
    ['application/json; charset=utf-7', false],
    ['Application/JSON; Charset=UTF-8', true],
    ['application/json; charset=UTF-7', false],
    ['application/json; charset', false],
    ['application/json ; charset = "utf-7"', false],
    ['text/event-stream; charset=utf-7', false],
  ];

  it('attack: labels interleaved with 70 distinct ones (the memo cleared between): each answer judged as itself', async () => {
    await postJson(rig.endpoint, listRequest('known'), rig.session);
    let label = 'application/json';
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      const params = message.params as { arguments: { text: string } };
      answerJson(
        res,
        {
          jsonrpc: '2.0',
          id: message.id,
          result: { content: [{ type: 'text', text: params.arguments.text }] },
        },
        200,
        {},
        label,
      );
      return true;
    };
    const plan = [
      ...ANSWERS,
      ...Array.from({ length: 70 }, (_, i) => [`application/json; n=${i}`, true] as const),
    ];
    for (const [round, order] of [plan, [...ANSWERS].reverse(), plan].entries()) {
      for (const [index, [value, relayed]] of order.entries()) {
        label = value;
        const id = `c-${round}-${index}`;
        const marker = `RESULT-${id}`;
        const reply = await postJson(rig.endpoint, callRequest(id, 'echo', { text: marker }), rig.session);
        expect({ value, relayed: reply.body.includes(marker) }).toEqual({ value, relayed });
        if (!relayed)
          expect(errorOf(reply.body, id)).toEqual(
            expect.objectContaining({ data: expect.objectContaining({ reason: 'media_type' }) }),
          );
      }
    }
  });
});

describe('redteam7: sessionKeyOf (identity headers collected with for...in, then sorted)', () => {
  const keyOf = (headers: Record<string, unknown>): string =>
    sessionKeyOf(headers as never, undefined, undefined);

  it.each(['constructor', 'tostring', 'hasownproperty', 'valueof', '__proto__', 'x-tenant'])(
    'attack: two callers that differ only in a %s header never share a key',
    (name) => {
      // JSON.parse makes even `__proto__` an own, enumerable member, as a parsed header object would hold it.
      const a = JSON.parse(`{"${name}":"a"}`) as Record<string, unknown>;
      const b = JSON.parse(`{"${name}":"b"}`) as Record<string, unknown>;
      expect(keyOf(a)).not.toBe(keyOf(b));
      expect(keyOf(a)).not.toBe(keyOf({}));
    },
  );

  it('the same caller keeps one key: header order, a null prototype, an array or its joined value', () => {
    const base = keyOf({ 'x-tenant': 't', authorization: 'Bearer k', cookie: 'c=1', 'x-org': 'o' });
    expect(keyOf({ 'x-org': 'o', cookie: 'c=1', authorization: 'Bearer k', 'x-tenant': 't' })).toBe(base);
    expect(
      keyOf(
        Object.assign(Object.create(null), {
          cookie: 'c=1',
          'x-org': 'o',
          'x-tenant': 't',
          authorization: 'Bearer k',
        }),
      ),
    ).toBe(base);
    // Per-request and tracing headers never split a caller.
    expect(
      keyOf({
        'x-org': 'o',
        cookie: 'c=1',
        authorization: 'Bearer k',
        'x-tenant': 't',
        traceparent: 'x',
        accept: 'y',
      }),
    ).toBe(base);
    expect(keyOf({ 'x-tenant': ['a', 'b'] })).toBe(keyOf({ 'x-tenant': 'a, b' }));
  });

  it('attack: one value under another identifying name is another caller', () => {
    expect(keyOf({ authorization: 'x' })).not.toBe(keyOf({ cookie: 'x' }));
    expect(keyOf({ 'x-a': 'v', 'x-b': 'w' })).not.toBe(keyOf({ 'x-a': 'w', 'x-b': 'v' }));
  });
});

describe('redteam7: callers told apart by an odd header name on a sessionless route', () => {
  const rig = useRig({ upstream: { sessions: false } });
  const listsSeen = (): number =>
    rig.upstream.requests.filter((request) => request.messages.some((m) => m.method === 'tools/list')).length;

  it.each(['Constructor', 'toString', 'hasOwnProperty', 'X-Tenant'])(
    "attack: the upstream serves a rug pull to %s: b only; b never calls from a's verified catalog",
    async (name) => {
      const header = name.toLowerCase();
      rig.upstream.reset();
      rig.upstream.behaviour = ({ req, res, message }) => {
        if (message.method !== 'tools/list') return false;
        rig.upstream.catalog = req.headers[header] === 'b' ? 'drifted' : 'pinned';
        answerJson(res, { jsonrpc: '2.0', id: message.id, result: { tools: rig.upstream.tools() } });
        return true;
      };
      const a = { [name]: 'a', 'Mcp-Protocol-Version': '2025-06-18' };
      const b = { [name]: 'b', 'Mcp-Protocol-Version': '2025-06-18' };
      await postJson(rig.endpoint, listRequest('lb'), b);
      await postJson(rig.endpoint, listRequest('la'), a);
      const bCall = await postJson(rig.endpoint, callRequest('cb', 'echo', { text: 'from-b' }), b);
      const aCall = await postJson(rig.endpoint, callRequest('ca', 'echo', { text: 'from-a' }), a);
      expect(errorOf(bCall.body, 'cb')).toBeDefined();
      expect(aCall.body).toContain('from-a');
      const calls = rig.upstream.requests.flatMap((request) =>
        request.messages.filter((m) => m.method === 'tools/call').map((m) => JSON.stringify(m.params)),
      );
      expect(calls.some((text) => text.includes('from-b'))).toBe(false);
      // The same caller, its headers in another order and case, keeps its catalog: no second listing.
      const lists = listsSeen();
      const again = await postJson(rig.endpoint, callRequest('ca2', 'echo', { text: 'again-a' }), {
        'mcp-protocol-version': '2025-06-18',
        [name.toUpperCase()]: 'a',
      });
      expect(again.body).toContain('again-a');
      expect(listsSeen()).toBe(lists);
    },
  );
});

describe('redteam7: the checkpoint store key remembered for the last session asked', () => {
  const rig = useRig();
  const calls = (text: string): number =>
    rig.upstream.requests.filter((request) =>
      request.messages.some((m) => m.method === 'tools/call' && JSON.stringify(m.params).includes(text)),
    ).length;

  it('attack: two sessions asked in turn (one served a rug pull), across a DELETE and a reload: each decided on its own catalog', async () => {
    const [s1, s2] = [await openSession(rig.endpoint), await openSession(rig.endpoint)];
    const drifted = s2['Mcp-Session-Id'];
    rig.upstream.behaviour = ({ req, res, message }) => {
      if (message.method !== 'tools/list') return false;
      rig.upstream.catalog = req.headers['mcp-session-id'] === drifted ? 'drifted' : 'pinned';
      answerJson(res, { jsonrpc: '2.0', id: message.id, result: { tools: rig.upstream.tools() } });
      return true;
    };
    const round = async (tag: string): Promise<void> => {
      await postJson(rig.endpoint, listRequest(`l2-${tag}`), s2);
      await postJson(rig.endpoint, listRequest(`l1-${tag}`), s1);
      for (let i = 0; i < 3; i++) {
        const bad = await postJson(
          rig.endpoint,
          callRequest(`b-${tag}-${i}`, 'echo', { text: `s2-${tag}` }),
          s2,
        );
        const good = await postJson(
          rig.endpoint,
          callRequest(`g-${tag}-${i}`, 'echo', { text: `s1-${tag}` }),
          s1,
        );
        expect(errorOf(bad.body, `b-${tag}-${i}`)).toBeDefined();
        expect(good.body).toContain(`s1-${tag}`);
      }
      expect(calls(`s2-${tag}`)).toBe(0);
    };
    await round('first');
    // The same pin files, loaded anew: every config object replaced, no server renamed.
    await rig.gateway.running.reload();
    await round('reloaded');
    const deleted = await exchangeRaw(rig.endpoint, rawRequest('DELETE', rig.endpoint, Object.entries(s1)));
    expect(deleted.status).toBeLessThan(300);
    const after = await postJson(rig.endpoint, callRequest('b-after', 'echo', { text: 's2-after' }), s2);
    expect(errorOf(after.body, 'b-after')).toBeDefined();
    expect(calls('s2-after')).toBe(0);
  });
});

describe('redteam7: the SSE relay (owed ids, the first-turn flush)', () => {
  const rig = useSessionRig({ gateway: { limits: { upstreamTimeoutMs: 3000, streamIdleMs: 400 } } });

  it('attack: the upstream opens a stream, answers another id, then goes quiet: headers leave at once, the owed id gets its timeout', async () => {
    await postJson(rig.endpoint, listRequest('known'), rig.session);
    let release: () => void = () => undefined;
    const quiet = new Promise<void>((resolve) => (release = resolve));
    rig.upstream.behaviour = async ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      await quiet;
      // An answer for an id the client never sent here, then silence.
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 'forged', result: { content: [] } })}\n\n`,
      );
      return true;
    };
    const connection = await RawConnection.open(rig.endpoint);
    try {
      connection.write(
        rawPost(
          rig.endpoint,
          JSON.stringify(callRequest('owed', 'echo', { text: 'x' })),
          Object.entries(rig.session),
        ),
      );
      // Nothing to say yet: the head arrives on its own (the first-turn flush), not with the timeout.
      await connection.waitFor((c) => c.responses.length > 0, 'the stream head', 2000);
      expect(connection.responses[0]!.status).toBe(200);
      expect(connection.received).not.toContain('"owed"');
      release();
      await connection.waitFor((c) => c.received.includes('"owed"'), 'the owed id', 4000);
      expect(errorOf(connection.responses[0]!.body, 'owed')).toEqual(
        expect.objectContaining({ code: -32041, data: expect.objectContaining({ reason: 'timeout' }) }),
      );
      expect(connection.received).not.toContain('forged');
    } finally {
      release();
      connection.close();
    }
  });
});

describe("redteam7: a pin's keys listed once per frozen pin (SessionCatalog)", () => {
  const observed = (name: string): Record<string, unknown> => ({
    name,
    key: `tool:${name}`,
    digest: `d-${name}`,
  });
  const page = (...names: string[]): never =>
    ({ kept: [], observed: names.map(observed), findings: [], unpinned: [], lowDrift: [] }) as never;
  const viewOf = (tools: Record<string, string>): PinView =>
    ({
      name: 'mal',
      mode: 'enforce',
      profile: 'trace',
      onDrift: 'block-tool',
      pin: { catalog: 'c', tools },
      definitions: {},
      extraMembers: {},
    }) as unknown as PinView;
  const removed = (catalog: SessionCatalog, pin: PinView, ...names: string[]): string[] =>
    catalog
      .addPage(pin, page(...names), true, true)!
      .findings.filter((finding) => finding.kind === 'removed')
      .map((finding) => finding.key);

  it('a pin object that is not frozen is read anew on every listing (its keys may change)', () => {
    const tools: Record<string, string> = { 'tool:a': 'd-a' };
    const pin = viewOf(tools);
    const catalog = new SessionCatalog();
    expect(removed(catalog, pin, 'a')).toEqual([]);
    tools['tool:b'] = 'd-b';
    expect(removed(catalog, pin, 'a')).toEqual(['tool:b']);
    delete tools['tool:b'];
    expect(removed(catalog, pin, 'a')).toEqual([]);
  });

  it('a reload (a new frozen pin) is judged by its own keys; wrong_subject only from own pinned keys', () => {
    const catalog = new SessionCatalog();
    const first = viewOf(Object.freeze({ 'tool:a': 'd-a' }));
    const second = viewOf(Object.freeze({ 'tool:a': 'd-a', 'tool:b': 'd-b' }));
    expect(removed(catalog, first, 'a')).toEqual([]);
    expect(removed(catalog, second, 'a')).toEqual(['tool:b']);
    expect(removed(catalog, first, 'a')).toEqual([]);
    // Keys a pin inherits (not its own) pin nothing: a listing of only those is another server's.
    const inherited = viewOf(
      Object.freeze(Object.assign(Object.create({ 'tool:x': 'd-x' }), { 'tool:a': 'd-a' })),
    );
    catalog.addPage(inherited, page('x'), true, true);
    expect(catalog.wrongSubject).toBe(true);
    catalog.addPage(inherited, page('a'), true, true);
    expect(catalog.wrongSubject).toBe(false);
  });
});

describe('redteam7: the aggregate, several checkpoints sharing one session store', () => {
  const rig = useScoped(async () => {
    const [first, second] = [await startMaliciousUpstream(), await startMaliciousUpstream()];
    const gateway = await startGatewayHarness(
      [pinFor('m1', first.url, PINNED_TOOLS), pinFor('m2', second.url, PINNED_TOOLS)],
      { aggregate: {} },
    );
    return {
      first,
      second,
      gateway,
      close: async () => {
        await gateway.close();
        await Promise.all([first.close(), second.close()]);
      },
    };
  });

  it("attack: m2 rug-pulls the second client's member session only; the two clients asked in turn on both members", async () => {
    const { first, second, gateway } = rig;
    const endpoint = `${gateway.url}/mcp`;
    // m2 serves its pinned catalog to the first member session that lists, a rug pull to any other.
    let honest: unknown;
    second.behaviour = ({ req, res, message }) => {
      if (message.method !== 'tools/list') return false;
      honest ??= req.headers['mcp-session-id'];
      second.catalog = req.headers['mcp-session-id'] === honest ? 'pinned' : 'drifted';
      answerJson(res, { jsonrpc: '2.0', id: message.id, result: { tools: second.tools() } });
      return true;
    };
    const x = await openSession(endpoint);
    await postJson(endpoint, listRequest('lx'), x);
    const y = await openSession(endpoint);
    const listed = await postJson(endpoint, listRequest('ly'), y);
    expect(listed.body).toContain('m1__echo');
    expect(listed.body).not.toContain('m2__echo');
    for (let i = 0; i < 3; i++) {
      for (const [who, headers] of [
        ['x', x],
        ['y', y],
      ] as const) {
        for (const member of ['m1', 'm2']) {
          const id = `${who}-${member}-${i}`;
          const reply = await postJson(endpoint, callRequest(id, `${member}__echo`, { text: id }), headers);
          if (who === 'y' && member === 'm2') expect(errorOf(reply.body, id)).toBeDefined();
          else expect(reply.body).toContain(`echo: ${id}`);
        }
      }
    }
    expect(second.executed).toHaveLength(3);
    expect(first.executed).toHaveLength(6);
  });
});
