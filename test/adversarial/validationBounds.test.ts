// Issue 24, findings 3 and 4: the value validated is the value sent, and validation is bounded.
// 3: `{"limit": 1e400}` is Infinity once parsed; a validator without strictNumbers takes it for an
//    integer ≥ 1, and JSON.stringify writes it as null: the upstream ran a call nobody checked.
// 4: a pinned `pattern` with nested quantifiers (and `uniqueItems` over 16,000 objects) made one
//    check take seconds on the event loop, freezing every route and /healthz.
// 4 (follow-up): a pinned schema recursing through two branches (anyOf of two subschemas that both
//    recurse) costs time exponential in the argument's nesting; it is metered and refused.
// Each is reproduced against the upstream directly, then refused through the gateway (raw bytes).
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { statelessEnvelope } from '../support/rawMcp.js';
import { useScoped, type Closable } from '../support/useScoped.js';
import { answerText } from './support/framing.js';
import { responsesIn } from './support/lenientRead.js';
import { startMaliciousUpstream, type MaliciousUpstream } from './support/maliciousUpstream.js';
import { exchangeRaw, RawConnection, rawPost, rawRequest } from './support/rawClient.js';
import { openSession, postJson } from './support/rig.js';

const NESTED_QUANTIFIER = '^([a-zA-Z0-9_.-]+/?)+$';
const HOSTILE_PATH = `${'a'.repeat(28)}!`;
const LIMIT_SCHEMA = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1 } },
  required: ['limit'],
};
// A schema recursing through two branches: both recurse into the same member before either
// fails, so Ajv applies it 2^depth times (22 levels of a 300-byte argument: 49 s on the event loop).
const BRANCHING_NODE = {
  anyOf: [
    { type: 'object', properties: { next: { $ref: '#/$defs/node' } } },
    { type: 'object', properties: { next: { $ref: '#/$defs/node' } }, required: ['next'] },
  ],
};
const BRANCHING_SCHEMA = { $defs: { node: BRANCHING_NODE }, $ref: '#/$defs/node' };
// A legitimate recursive schema: a tree of named nodes, recursing once per child (`$ref: "#"`).
const TREE_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
  required: ['name'],
};
const TOOLS = [
  { name: 'list', description: 'Lists items.', inputSchema: LIMIT_SCHEMA },
  {
    name: 'lookup',
    description: 'Looks a path up.',
    inputSchema: { type: 'object', properties: { path: { type: 'string', pattern: NESTED_QUANTIFIER } } },
    outputSchema: { type: 'object', properties: { path: { type: 'string', pattern: NESTED_QUANTIFIER } } },
  },
  {
    name: 'tag',
    description: 'Tags items.',
    inputSchema: { type: 'object', properties: { tags: { type: 'array', uniqueItems: true } } },
  },
  {
    name: 'walk',
    description: 'Walks a chain.',
    inputSchema: BRANCHING_SCHEMA,
    outputSchema: BRANCHING_SCHEMA,
  },
  { name: 'plant', description: 'Plants a tree.', inputSchema: TREE_SCHEMA, outputSchema: TREE_SCHEMA },
];

/** `{"next": {"next": … 1}}`: `depth` levels, a leaf neither branch accepts. */
/** An answer whose structuredContent fits both recursive output schemas. */
const FITTING_RESULT = (id: unknown) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    result: { content: [], structuredContent: { name: 'r', children: [] } },
  });

function chain(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { next: value };
  return value;
}

/** A tree of `width` children per node, `depth` levels. */
function tree(depth: number, width: number): unknown {
  return {
    name: `n${depth}`,
    children: depth === 0 ? [] : Array.from({ length: width }, () => tree(depth - 1, width)),
  };
}

/** The call of finding 3, byte for byte: JSON.stringify could never write 1e400. */
function limitCall(id: string, extraParams = ''): string {
  return `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"list","arguments":{"limit":1e400}${extraParams}}}`;
}

interface Setup extends Closable {
  readonly upstream: MaliciousUpstream;
  readonly gateway: GatewayHarness;
  readonly endpoint: string;
  readonly session: Record<string, string>;
}

function useSetup(): Setup {
  return useScoped(async () => {
    const upstream = await startMaliciousUpstream();
    const gateway = await startGatewayHarness([
      { ...pinFor('val', upstream.url, TOOLS), onBadOutput: 'block' },
    ]);
    const endpoint = `${gateway.url}/val/mcp`;
    return {
      upstream,
      gateway,
      endpoint,
      session: await openSession(endpoint),
      close: async () => {
        await gateway.close();
        await upstream.close();
      },
    };
  });
}

/** The upstream lists the hostile tools; `result` answers a tools/call with exact text (else the default). */
function serveTools(upstream: MaliciousUpstream, result?: (id: unknown) => string): void {
  upstream.behaviour = ({ res, message }) => {
    if (message.method === 'tools/list') {
      answerText(
        res,
        'application/json',
        JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: TOOLS } }),
      );
      return true;
    }
    if (message.method !== 'tools/call' || result === undefined) return false;
    answerText(res, 'application/json', result(message.id));
    return true;
  };
}

function errorOf(body: string): Record<string, unknown> | undefined {
  return responsesIn(body)[0]?.error as Record<string, unknown> | undefined;
}

describe('finding 3: a number that does not survive a round trip', () => {
  const setup = useSetup();
  beforeEach(() => {
    setup.upstream.reset();
    serveTools(setup.upstream);
  });

  it('reproduced directly: the upstream runs it, and re-serialized it is null', async () => {
    const direct = await postJson(setup.upstream.url, limitCall('direct'));
    expect(direct.status).toBe(200);
    expect(setup.upstream.executed).toEqual(['list']);
    const received = setup.upstream.requests.at(-1)?.messages[0] as { params: { arguments: unknown } };
    // What the gateway relayed before the fix (its validator, strictNumbers off, took Infinity for an integer ≥ 1).
    expect(JSON.stringify(received.params.arguments)).toBe('{"limit":null}');
  });

  it('is refused at parse on the proxy front (-32600 arguments_invalid, the call id), never forwarded', async () => {
    const reply = await postJson(setup.endpoint, limitCall('c1'), setup.session);
    expect(reply.status).toBe(400);
    expect(responsesIn(reply.body)).toEqual([
      expect.objectContaining({
        id: 'c1',
        error: expect.objectContaining({
          code: -32600,
          data: {
            reason: 'arguments_invalid',
            tool: 'list',
            problems: [{ pointer: '/limit', keyword: 'type' }],
          },
        }),
      }),
    ]);
    // A negative one, and one hidden in a batch, the same.
    const negative = await postJson(
      setup.endpoint,
      limitCall('c2').replace('1e400', '-1e400'),
      setup.session,
    );
    expect(errorOf(negative.body)).toMatchObject({ code: -32600, data: { reason: 'arguments_invalid' } });
    const ping = '{"jsonrpc":"2.0","id":"p","method":"ping"}';
    const batch = await postJson(setup.endpoint, `[${ping},${limitCall('c3')}]`, setup.session);
    expect(batch.status).toBe(400);
    expect(setup.upstream.executed).toEqual([]);
    expect(setup.upstream.requests.some((request) => request.text.includes('"limit":null'))).toBe(false);
  });

  it('is refused the same on the 2026-07-28 sessionless front', async () => {
    const envelope = `,"_meta":${JSON.stringify(statelessEnvelope('raw-adversary'))}`;
    const reply = await exchangeRaw(
      setup.endpoint,
      rawPost(setup.endpoint, limitCall('m1', envelope), [
        ['Mcp-Protocol-Version', '2026-07-28'],
        ['Mcp-Method', 'tools/call'],
        ['Mcp-Name', 'list'],
      ]),
    );
    expect(reply.status).toBe(400);
    expect(errorOf(reply.body)).toMatchObject({ code: -32600, data: { reason: 'arguments_invalid' } });
    expect(setup.upstream.executed).toEqual([]);
  });

  it('is refused the same on the legacy HTTP+SSE front (bridged)', async () => {
    const url = `${setup.gateway.url}/val/sse`;
    const stream = await RawConnection.open(url);
    try {
      stream.write(rawRequest('GET', url, [['Accept', 'text/event-stream']]));
      await stream.waitFor(
        (c) => /event: endpoint\r?\ndata: [^\r\n]+/.test(c.received),
        'the endpoint event',
      );
      const post = new URL(/event: endpoint\r?\ndata: ([^\r\n]+)/.exec(stream.received)?.[1] ?? '', url).href;
      const reply = await exchangeRaw(post, rawPost(post, limitCall('l1')));
      expect(reply.status).toBe(400);
      expect(errorOf(reply.body)).toMatchObject({ code: -32600, data: { reason: 'arguments_invalid' } });
      expect(setup.upstream.executed).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it('drops an upstream answer holding one (-32042 invalid_message), never relayed as null', async () => {
    serveTools(
      setup.upstream,
      (id) =>
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[],"structuredContent":{"total":1e400}}}`,
    );
    const reply = await postJson(
      setup.endpoint,
      { jsonrpc: '2.0', id: 'r1', method: 'tools/call', params: { name: 'list', arguments: { limit: 2 } } },
      setup.session,
    );
    expect(setup.upstream.executed).toEqual(['list']);
    expect(reply.body).not.toContain('"total"');
    expect(errorOf(reply.body)).toMatchObject({ code: -32042, data: { reason: 'invalid_message' } });
  });
});

describe('finding 4: validation is bounded and never freezes the gateway', () => {
  const setup = useSetup();
  beforeEach(() => setup.upstream.reset());

  /** Sends a call and, while it is in flight, asks the admin listener's /healthz. */
  async function callBesideHealthz(
    body: unknown,
  ): Promise<{ error: unknown; healthz: number; healthzMs: number }> {
    const call = postJson(setup.endpoint, body, setup.session);
    const started = performance.now();
    const health = await fetch(`${setup.gateway.running.adminUrl}/healthz`);
    const healthzMs = performance.now() - started;
    const reply = await call;
    return { error: errorOf(reply.body), healthz: health.status, healthzMs };
  }

  it('refuses the nested-quantifier argument by its pattern while /healthz answers', async () => {
    serveTools(setup.upstream);
    const seen = await callBesideHealthz({
      jsonrpc: '2.0',
      id: 'p1',
      method: 'tools/call',
      params: { name: 'lookup', arguments: { path: HOSTILE_PATH } },
    });
    expect(seen.error).toMatchObject({
      code: -32040,
      data: { reason: 'arguments_invalid', problems: [{ pointer: '/path', keyword: 'pattern' }] },
    });
    expect(seen.healthz).toBe(200);
    // Not a speed test: the bound is there to say that nothing froze for seconds.
    expect(seen.healthzMs).toBeLessThan(1000);
    expect(setup.upstream.executed).toEqual([]);
  });

  it('refuses uniqueItems over 16,000 objects as unverifiable (not run) while /healthz answers', async () => {
    serveTools(setup.upstream);
    const tags = Array.from({ length: 16_000 }, (_, i) => ({ a: 1, b: 'x', c: i }));
    const seen = await callBesideHealthz({
      jsonrpc: '2.0',
      id: 'u1',
      method: 'tools/call',
      params: { name: 'tag', arguments: { tags } },
    });
    expect(seen.error).toMatchObject({
      code: -32040,
      data: { reason: 'unverifiable', bound: 'unique_items' },
    });
    expect(seen.healthz).toBe(200);
    expect(seen.healthzMs).toBeLessThan(1000);
    expect(setup.upstream.executed).toEqual([]);
  });

  it('checks the same pattern in structuredContent against the outputSchema (onBadOutput: block)', async () => {
    serveTools(setup.upstream, (id) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        result: { content: [], structuredContent: { path: HOSTILE_PATH } },
      }),
    );
    const seen = await callBesideHealthz({
      jsonrpc: '2.0',
      id: 'o1',
      method: 'tools/call',
      params: { name: 'lookup', arguments: { path: 'src/a.ts' } },
    });
    expect(setup.upstream.executed).toEqual(['lookup']);
    expect(seen.error).toMatchObject({
      code: -32040,
      data: { reason: 'output_invalid', problems: [{ pointer: '/path', keyword: 'pattern' }] },
    });
    expect(seen.healthz).toBe(200);
    expect(seen.healthzMs).toBeLessThan(1000);
  });
});

describe('a pinned schema recursing through two branches: validation is metered, never exponential', () => {
  const setup = useSetup();
  beforeEach(() => setup.upstream.reset());

  it('reproduced directly: the upstream takes the 24-level argument', async () => {
    serveTools(setup.upstream);
    const call = { name: 'walk', arguments: chain(24) };
    const direct = await postJson(setup.upstream.url, {
      jsonrpc: '2.0',
      id: 'd',
      method: 'tools/call',
      params: call,
    });
    expect(direct.status).toBe(200);
    expect(setup.upstream.executed).toEqual(['walk']);
  });

  it('refuses it as unverifiable (bound: evaluations), not run, while /healthz answers', async () => {
    serveTools(setup.upstream);
    const started = performance.now();
    const call = postJson(
      setup.endpoint,
      { jsonrpc: '2.0', id: 'w1', method: 'tools/call', params: { name: 'walk', arguments: chain(24) } },
      setup.session,
    );
    const health = await fetch(`${setup.gateway.running.adminUrl}/healthz`);
    const healthzMs = performance.now() - started;
    const reply = await call;
    expect(errorOf(reply.body)).toMatchObject({
      code: -32040,
      message: expect.stringContaining('would cost too much to check'),
      data: { reason: 'unverifiable', tool: 'walk', bound: 'evaluations' },
    });
    expect(health.status).toBe(200);
    // Not a speed test: unbounded, this argument holds the event loop for minutes.
    expect(healthzMs).toBeLessThan(5000);
    expect(setup.upstream.executed).toEqual([]);
  });

  it('still validates the same schema on a shallow argument (allowed) and refuses a misfit', async () => {
    serveTools(setup.upstream, FITTING_RESULT);
    const fits = await postJson(
      setup.endpoint,
      {
        jsonrpc: '2.0',
        id: 'w2',
        method: 'tools/call',
        params: { name: 'walk', arguments: { next: { next: {} } } },
      },
      setup.session,
    );
    expect(errorOf(fits.body)).toBeUndefined();
    const misfit = await postJson(
      setup.endpoint,
      { jsonrpc: '2.0', id: 'w3', method: 'tools/call', params: { name: 'walk', arguments: chain(3) } },
      setup.session,
    );
    expect(errorOf(misfit.body)).toMatchObject({ code: -32040, data: { reason: 'arguments_invalid' } });
    expect(setup.upstream.executed).toEqual(['walk']);
  });

  it('allows a legitimate recursive tree ($ref "#", 1,365 nodes) and refuses one missing a name', async () => {
    serveTools(setup.upstream, FITTING_RESULT);
    const planted = await postJson(
      setup.endpoint,
      { jsonrpc: '2.0', id: 't1', method: 'tools/call', params: { name: 'plant', arguments: tree(5, 4) } },
      setup.session,
    );
    expect(errorOf(planted.body)).toBeUndefined();
    expect(setup.upstream.executed).toEqual(['plant']);
    const nameless = { name: 'root', children: [{ name: 'a', children: [{ children: [] }] }] };
    const refused = await postJson(
      setup.endpoint,
      { jsonrpc: '2.0', id: 't2', method: 'tools/call', params: { name: 'plant', arguments: nameless } },
      setup.session,
    );
    expect(errorOf(refused.body)).toMatchObject({
      code: -32040,
      data: {
        reason: 'arguments_invalid',
        problems: [{ pointer: '/children/0/children/0/name', keyword: 'required' }],
      },
    });
  });

  it('refuses the same nesting in structuredContent (onBadOutput: block) while /healthz answers', async () => {
    serveTools(setup.upstream, (id) =>
      JSON.stringify({ jsonrpc: '2.0', id, result: { content: [], structuredContent: chain(24) } }),
    );
    const started = performance.now();
    const call = postJson(
      setup.endpoint,
      { jsonrpc: '2.0', id: 'o2', method: 'tools/call', params: { name: 'walk', arguments: {} } },
      setup.session,
    );
    const health = await fetch(`${setup.gateway.running.adminUrl}/healthz`);
    const healthzMs = performance.now() - started;
    const reply = await call;
    expect(setup.upstream.executed).toEqual(['walk']);
    expect(errorOf(reply.body)).toMatchObject({
      code: -32040,
      data: { reason: 'unverifiable', tool: 'walk', bound: 'evaluations' },
    });
    expect(reply.body).not.toContain('"next"');
    expect(health.status).toBe(200);
    expect(healthzMs).toBeLessThan(5000);
  });
});
