import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  connectSseClient,
  connectV1Client,
  connectV2Client,
  defaultTools,
  startV1Server,
  type PeerHandle,
} from '../peers/index.js';
import { freePort } from '../peers/freePort.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { startTestIdentityProvider, type TestIdentityProvider } from '../support/testIdentityProvider.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, openRawSession, postRaw, statelessEnvelope } from '../support/rawMcp.js';
import { sendRawHttp } from '../support/rawHttpClient.js';
import {
  fixtureCommand,
  listStdioSurfaces,
  startWrapInProcess,
  stdioPinFor,
  writePin,
  type StdioSurfaces,
} from '../transports/support.js';
import { refusal, textOf } from '../support/rejection.js';
import { startMemberUpstreams, type MemberUpstreams } from '../support/memberUpstreams.js';

// Keys as a client holds them; the gateway file holds only their SHA-256.
const ALICE_KEY = 'alice-key-0123456789';
const BOB_KEY = 'bob-key-9876543210';
const CAROL_KEY = 'carol-key-5555555555';
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Alice: web's echo, local's add and every local prompt; old not at all. Bob: everything. */
function principals(aliceWeb: readonly string[]): Record<string, unknown>[] {
  return [
    {
      name: 'alice',
      apiKey: { sha256: sha256(ALICE_KEY) },
      servers: { web: aliceWeb, local: { tools: ['add'], prompts: '*' } },
    },
    { name: 'bob', apiKey: { sha256: sha256(BOB_KEY) }, servers: { '*': '*' } },
    { name: 'carol', apiKey: { sha256: sha256(CAROL_KEY) }, servers: { web: '*' } },
  ];
}

/** The first JSON-RPC error of a raw reply. */
function errorOf(reply: { messages: unknown[] }): { code: number; data?: Record<string, unknown> } {
  const message = reply.messages[0] as { error?: { code: number; data?: Record<string, unknown> } };
  if (message?.error === undefined)
    throw new Error(`expected an error, got ${JSON.stringify(reply.messages)}`);
  return message.error;
}

describe('scopes per principal: what each principal sees and calls, on every route', () => {
  let upstreams: MemberUpstreams | undefined;
  let web: PeerHandle;
  let old: PeerHandle;
  let served: StdioSurfaces;
  let gateway: GatewayHarness;
  let dir: string;
  // local's children each write a file here when they start (TOOLPIN_FIXTURE_PID_DIR).
  let pidDir: string;
  // local's children log each resources/read they answer here (`read:<uri>`).
  let callLog: string;
  const clients: { close(): Promise<void> }[] = [];
  const keep = <T extends { close(): Promise<void> }>(client: T): T => {
    clients.push(client);
    return client;
  };
  const as = (key: string): { headers: Record<string, string> } => ({ headers: { 'x-toolpin-key': key } });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-scopes-'));
    pidDir = join(dir, 'pids');
    callLog = join(dir, 'calls.log');
    await mkdir(pidDir);
    const env = {
      TOOLPIN_FIXTURE_SURFACES: '1',
      TOOLPIN_FIXTURE_PID_DIR: pidDir,
      TOOLPIN_FIXTURE_CALL_LOG: callLog,
    };
    upstreams = await startMemberUpstreams({ env });
    ({ web, old, served } = upstreams);
    gateway = await startGatewayHarness([...upstreams.pins], {
      aggregate: {},
      principals: principals(['echo']),
    });
  }, 20_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await gateway?.close();
    await upstreams?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('filters the listing and refuses an out-of-scope call before the upstream (per-server HTTP route, v1)', async () => {
    const alice = keep(await connectV1Client(`${gateway.url}/web/mcp`, as(ALICE_KEY)));
    expect((await alice.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    expect(textOf(await alice.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
    const before = web.callCount('add');
    const refused = await refusal(alice.callTool({ name: 'add', arguments: { a: 1, b: 2 } }));
    expect(refused.code).toBe(-32040);
    expect(refused.data).toMatchObject({
      reason: 'not_in_scope',
      server: 'web',
      tool: 'add',
      principal: 'alice',
    });
    expect(web.callCount('add')).toBe(before);
    const metrics = await (await fetch(`${gateway.running.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/^toolpin_out_of_scope_total\{server="web",principal="alice"\} [1-9]/m);
    // /status shows each principal's scope, never its key (nor the key's hash).
    const status = (await (await fetch(`${gateway.running.adminUrl}/status`)).json()) as {
      principals: { name: string; recognizedBy: string; servers: Record<string, unknown> }[];
    };
    expect(status.principals.map(({ name, recognizedBy }) => [name, recognizedBy])).toEqual([
      ['alice', 'apiKey'],
      ['bob', 'apiKey'],
      ['carol', 'apiKey'],
    ]);
    expect(status.principals[0]!.servers.web).toEqual({
      tools: ['echo'],
      prompts: ['echo'],
      resourceTemplates: ['echo'],
    });
    expect(JSON.stringify(status)).not.toContain(sha256(ALICE_KEY));
    // The review page shows each server's scope, one line per principal.
    const page = await (await fetch(`${gateway.running.adminUrl}/ui`)).text();
    expect(page).toContain('alice: tools echo; prompts echo; templates echo');
    expect(page).toContain('alice: tools add; prompts every one; templates none');
    expect(page).toContain('bob: tools every one; prompts every one; templates every one');
    // Bob's scope is everything: the same route, the same upstream, every pinned tool.
    const bob = keep(await connectV1Client(`${gateway.url}/web/mcp`, as(BOB_KEY)));
    expect((await bob.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo', 'slow']);
    expect(textOf(await bob.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).toBe('3');
  });

  it('scopes a bridged stdio route per surface: tools by name, every prompt (v1 and a 2026-07-28 v2 client)', async () => {
    const alice = keep(await connectV1Client(`${gateway.url}/local/mcp`, as(ALICE_KEY)));
    expect((await alice.listTools()).tools.map((tool) => tool.name)).toEqual(['add']);
    expect((await alice.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(
      served.prompts.map((prompt) => prompt.name),
    );
    // No template is in her scope (the object form leaves resourceTemplates out).
    expect((await alice.listResourceTemplates()).resourceTemplates).toEqual([]);
    const echo = await refusal(alice.callTool({ name: 'echo', arguments: { text: 'x' } }));
    expect(echo.data).toMatchObject({ reason: 'not_in_scope', server: 'local', tool: 'echo' });
    const v2 = keep(
      await connectV2Client(`${gateway.url}/local/mcp`, {
        negotiation: { pin: '2026-07-28' },
        ...as(ALICE_KEY),
      }),
    );
    expect((await v2.listTools()).tools.map((tool) => tool.name)).toEqual(['add']);
    expect(textOf(await v2.callTool({ name: 'add', arguments: { a: 2, b: 2 } }))).toBe('4');
    const refused = await refusal(v2.callTool({ name: 'crash', arguments: {} }));
    expect(refused).toMatchObject({ code: -32040, data: { reason: 'not_in_scope', principal: 'alice' } });
  });

  it('scopes the legacy HTTP+SSE front of a server (2024-11-05 client, the key on its GET and POSTs)', async () => {
    const alice = keep(await connectSseClient(`${gateway.url}/local/sse`, { 'x-toolpin-key': ALICE_KEY }));
    expect((await alice.listTools()).tools.map((tool) => tool.name)).toEqual(['add']);
    const refused = await refusal(alice.callTool({ name: 'echo', arguments: { text: 'x' } }));
    expect(refused).toMatchObject({ code: -32040, data: { reason: 'not_in_scope', principal: 'alice' } });
    expect(textOf(await alice.callTool({ name: 'add', arguments: { a: 1, b: 1 } }))).toBe('2');
  });

  it('scopes the aggregate union: members out of scope leave it, their calls are refused naming the member', async () => {
    const alice = keep(await connectV1Client(`${gateway.url}/mcp`, as(ALICE_KEY)));
    expect((await alice.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'local__add',
      'web__echo',
    ]);
    expect((await alice.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(
      served.prompts.map((prompt) => `local__${prompt.name}`),
    );
    const before = old.callCount('add');
    const oldAdd = await refusal(alice.callTool({ name: 'old__add', arguments: { a: 1, b: 1 } }));
    expect(oldAdd).toMatchObject({
      code: -32040,
      data: { reason: 'not_in_scope', server: 'old', tool: 'add' },
    });
    expect(old.callCount('add')).toBe(before);
    expect(textOf(await alice.callTool({ name: 'web__echo', arguments: { text: 'agg' } }))).toBe('agg');
    // Names the union never showed her: a member's tool out of her scope, look-alikes of hers.
    const webAdds = web.callCount('add');
    for (const name of ['web__add', 'web__еcho', 'web__Echo', 'web__echo\u200b']) {
      const refused = await refusal(alice.callTool({ name, arguments: { text: 'x', a: 1, b: 1 } }));
      expect(refused).toMatchObject({ code: -32040, data: { reason: 'not_in_scope', server: 'web' } });
    }
    expect(web.callCount('add')).toBe(webAdds);
    const v2 = keep(
      await connectV2Client(`${gateway.url}/mcp`, { negotiation: { pin: '2026-07-28' }, ...as(BOB_KEY) }),
    );
    const names = (await v2.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['web__add', 'old__add', 'local__echo']));
  });

  it('a server out of the principal’s scope gives it no instructions, on its own route and in the aggregate’s', async () => {
    const alice = keep(await connectV1Client(`${gateway.url}/local/mcp`, as(ALICE_KEY)));
    expect(alice.getInstructions()).toBe(served.instructions);
    // Its own route is closed to her (no instructions, no listing, no resources: nothing reaches it).
    await expect(connectV1Client(`${gateway.url}/local/mcp`, as(CAROL_KEY))).rejects.toThrow(
      /server local is not in the scope of principal carol/,
    );
    const aggregate = keep(await connectV1Client(`${gateway.url}/mcp`, as(CAROL_KEY)));
    expect(aggregate.getInstructions() ?? '').not.toContain(served.instructions);
    expect((await aggregate.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'web__add',
      'web__echo',
      'web__slow',
    ]);
  });

  it('attack: the aggregate never starts a member out of the principal’s scope (no stdio child for it)', async () => {
    const started = async (): Promise<number> => (await readdir(pidDir)).length;
    const before = await started();
    // Carol's scope names web only: her aggregate session opens no local child, and a call naming
    // one of local's tools is refused by local's checkpoint, nothing started to answer it.
    const carol = keep(await connectV1Client(`${gateway.url}/mcp`, as(CAROL_KEY)));
    expect((await carol.listPrompts()).prompts).toEqual([]);
    for (const name of ['local__echo', 'local__add']) {
      const refused = await refusal(carol.callTool({ name, arguments: { text: 'x', a: 1, b: 1 } }));
      expect(refused).toMatchObject({
        code: -32040,
        data: {
          reason: 'not_in_scope',
          server: 'local',
          tool: name.slice('local__'.length),
          principal: 'carol',
        },
      });
    }
    const prompt = await refusal(carol.getPrompt({ name: `local__${served.prompts[0]?.name}` }));
    expect(prompt).toMatchObject({ code: -32040, data: { reason: 'not_in_scope', server: 'local' } });
    expect(await started()).toBe(before);
    // Alice's scope names local: her session starts its child (the count above can move).
    keep(await connectV1Client(`${gateway.url}/mcp`, as(ALICE_KEY)));
    expect(await started()).toBe(before + 1);
  });

  it('attack: a resources/read of a URI matching a template out of scope is refused before the upstream, naming it', async () => {
    const reads = async (): Promise<string[]> =>
      (await readFile(callLog, 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line.startsWith('read:'));
    const notInScope = {
      code: -32040,
      data: { reason: 'not_in_scope', server: 'local', template: 'note:///{id}', principal: 'alice' },
    };
    // Alice's scope names no template of local: its note:///{id} (pinned) is hers to read by no URI.
    const alice = keep(await connectV1Client(`${gateway.url}/local/mcp`, as(ALICE_KEY)));
    expect((await alice.listResourceTemplates()).resourceTemplates).toEqual([]);
    for (const uri of ['note:///1', 'note:///..%2Fsecret'])
      expect(await refusal(alice.readResource({ uri }))).toMatchObject(notInScope);
    // A 2026-07-28 client of hers, no listing first: the pin's template decides.
    const v2 = keep(
      await connectV2Client(`${gateway.url}/local/mcp`, {
        negotiation: { pin: '2026-07-28' },
        ...as(ALICE_KEY),
      }),
    );
    expect(await refusal(v2.readResource({ uri: 'note:///2' }))).toMatchObject(notInScope);
    expect(await reads()).toEqual([]);
    // A URI no template matches goes upstream as before.
    expect((await alice.readResource({ uri: 'other:///x' })).contents).toEqual([
      { uri: 'other:///x', mimeType: 'text/plain', text: 'the note other:///x' },
    ]);
    // Bob's scope names every template: his read of a note reaches the upstream (a 2026-07-28
    // client: no session held, the route bounds the sessions of one client).
    const bob = keep(
      await connectV2Client(`${gateway.url}/local/mcp`, {
        negotiation: { pin: '2026-07-28' },
        ...as(BOB_KEY),
      }),
    );
    expect((await bob.readResource({ uri: 'note:///3' })).contents[0]).toMatchObject({
      text: 'the note note:///3',
    });
    expect(await reads()).toEqual(['read:other:///x', 'read:note:///3']);
  });

  it('fails closed when principals are configured and a request matches none (no key, a wrong key)', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    for (const [path, headers] of [
      ['/web/mcp', {}],
      ['/local/mcp', { 'x-toolpin-key': 'not-a-key' }],
      ['/mcp', { 'x-toolpin-key': ALICE_KEY.toUpperCase() }],
    ] as const) {
      const reply = await postRaw(`${gateway.url}${path}`, initialize, headers);
      expect(reply.status).toBe(403);
      expect(errorOf(reply)).toMatchObject({
        code: -32040,
        data: { reason: 'not_in_scope', principal: null },
      });
    }
    expect(gateway.events('principal.unresolved').length).toBeGreaterThanOrEqual(3);
    // The key is never logged, not even a wrong one.
    const logged = JSON.stringify(gateway.logs);
    for (const secret of [ALICE_KEY, BOB_KEY, 'not-a-key', ALICE_KEY.toUpperCase()])
      expect(logged).not.toContain(secret);
  });

  it('never forwards the API key to the upstream', async () => {
    const alice = keep(await connectV1Client(`${gateway.url}/web/mcp`, as(ALICE_KEY)));
    await alice.listTools();
    expect(web.requests.some((request) => 'x-toolpin-key' in request.headers)).toBe(false);
  });

  it('attack: look-alike names and names the list never showed are refused, reaching no upstream (raw bytes)', async () => {
    const headers = await openRawSession(`${gateway.url}/local/mcp`, { 'x-toolpin-key': ALICE_KEY });
    const lookAlikes = [
      'Add',
      'add ',
      'аdd' /* Cyrillic a */,
      'ad\u200bd',
      'add\u0000',
      './add',
      'echo',
      'rug-pull',
    ];
    for (const [index, name] of lookAlikes.entries()) {
      const reply = await postRaw(
        `${gateway.url}/local/mcp`,
        callRequest(index + 10, name, { a: 1, b: 1 }),
        headers,
      );
      expect(errorOf(reply)).toMatchObject({
        code: -32040,
        data: { reason: 'not_in_scope', server: 'local' },
      });
    }
    // The exact bytes of a raw client: an out-of-scope prompt of web (web pins no prompts) and a
    // template completion: both refused as out of scope, before any upstream.
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'c1',
      method: 'completion/complete',
      params: { ref: { type: 'ref/resource', uri: 'note:///{id}' }, argument: { name: 'id', value: '1' } },
    });
    const url = new URL(`${gateway.url}/local/mcp`);
    const raw = await sendRawHttp(
      url.href,
      `POST /local/mcp HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nX-Toolpin-Key: ${ALICE_KEY}\r\n` +
        `Mcp-Session-Id: ${headers['mcp-session-id']}\r\nMcp-Protocol-Version: 2025-06-18\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(raw.body).toContain('"not_in_scope"');
    expect(raw.body).toContain('note:///{id}');
  });

  it("attack: on a transparent route, another principal's key on a session id is 404 (the upstream cannot tell them apart)", async () => {
    const endpoint = `${gateway.url}/web/mcp`;
    const headers = await openRawSession(endpoint, { 'x-toolpin-key': ALICE_KEY });
    expect(headers['mcp-session-id']).toEqual(expect.any(String));
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    const swapped = await postRaw(endpoint, list, { ...headers, 'x-toolpin-key': BOB_KEY });
    expect(swapped.status).toBe(404);
    expect(gateway.events('principal.session_refused')).toContainEqual(
      expect.objectContaining({ server: 'web', principal: 'bob' }),
    );
    const own = await postRaw(endpoint, { ...list, id: 3 }, headers);
    expect(own.status).toBe(200);
    expect(own.messages).toEqual([expect.objectContaining({ id: 3, result: expect.anything() })]);
  });

  it('attack: a principal swapping keys mid-session gets no session, the other principal no catalog of hers', async () => {
    // A 2025 session opened by alice on a bridged route and on the aggregate: bob's key on it is 404.
    for (const path of ['/local/mcp', '/mcp']) {
      const headers = await openRawSession(`${gateway.url}${path}`, { 'x-toolpin-key': ALICE_KEY });
      const swapped = await postRaw(`${gateway.url}${path}`, callRequest(2, 'echo', { text: 'x' }), {
        ...headers,
        'x-toolpin-key': BOB_KEY,
      });
      expect(swapped.status).toBe(404);
      const own = await postRaw(
        `${gateway.url}${path}`,
        callRequest(3, path === '/mcp' ? 'local__echo' : 'echo', { text: 'x' }),
        headers,
      );
      expect(errorOf(own).data).toMatchObject({ reason: 'not_in_scope', principal: 'alice' });
    }
    // A 2026-07-28 request (no session) decides under the key it carries, each principal on its own catalog.
    const list = { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { _meta: statelessEnvelope() } };
    const v2Headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
    const aliceList = await postRaw(`${gateway.url}/local/mcp`, list, {
      ...v2Headers,
      'x-toolpin-key': ALICE_KEY,
    });
    const bobList = await postRaw(`${gateway.url}/local/mcp`, list, {
      ...v2Headers,
      'x-toolpin-key': BOB_KEY,
    });
    const names = (reply: { messages: unknown[] }): string[] =>
      ((reply.messages[0] as { result: { tools: { name: string }[] } }).result.tools ?? []).map(
        (tool) => tool.name,
      );
    expect(names(aliceList)).toEqual(['add']);
    expect(names(bobList).sort()).toEqual(served.tools.map((tool) => tool.name).sort());
  });

  it('a scope change on reload applies to the next request of a session already open', async () => {
    const alice = keep(await connectV1Client(`${gateway.url}/mcp`, as(ALICE_KEY)));
    expect((await alice.listTools()).tools.map((tool) => tool.name)).not.toContain('web__add');
    const file = join(gateway.dir, 'gateway.json');
    const document = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...document, principals: principals(['echo', 'add']) }));
    try {
      await gateway.running.reload();
      expect((await alice.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
        'local__add',
        'web__add',
        'web__echo',
      ]);
      expect(textOf(await alice.callTool({ name: 'web__add', arguments: { a: 4, b: 5 } }))).toBe('9');
      // A broken block leaves the last good one in force.
      await writeFile(file, JSON.stringify({ ...document, principals: [{ name: 'x' }] }));
      await gateway.running.reload();
      expect(gateway.events('principals.reload_failed').length).toBe(1);
      expect(textOf(await alice.callTool({ name: 'web__add', arguments: { a: 1, b: 1 } }))).toBe('2');
    } finally {
      await writeFile(file, JSON.stringify(document));
      await gateway.running.reload();
    }
    const refused = await refusal(alice.callTool({ name: 'web__add', arguments: { a: 1, b: 1 } }));
    expect(refused.data).toMatchObject({ reason: 'not_in_scope' });
  });
});

describe("scopes on wrap's stdio front: the principal is the local user", () => {
  let dir: string;
  let pinFile: string;
  let served: StdioSurfaces;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-scopes-wrap-'));
    const env = { TOOLPIN_FIXTURE_SURFACES: '1', TOOLPIN_FIXTURE_CALL_LOG: join(dir, 'calls.log') };
    served = await listStdioSurfaces(fixtureCommand(), env);
    pinFile = await writePin(dir, stdioPinFor('local', fixtureCommand(), served.tools, env));
  }, 20_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const gatewayFile = async (local: true | string): Promise<string> => {
    const file = join(dir, `gateway-${String(local)}.json`);
    await writeFile(
      file,
      JSON.stringify({ servers: '.', principals: [{ name: 'me', local, servers: { local: ['echo'] } }] }),
    );
    return file;
  };

  it('scopes the local user: lists and calls only what the principal may (v1 client on in-memory stdio)', async () => {
    const wrap = await startWrapInProcess(pinFile, undefined, ['--principals', await gatewayFile(true)]);
    try {
      expect((await wrap.client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
      expect(textOf(await wrap.client.callTool({ name: 'echo', arguments: { text: 'me' } }))).toBe('me');
      const refused = await refusal(wrap.client.callTool({ name: 'add', arguments: { a: 1, b: 1 } }));
      expect(refused).toMatchObject({ code: -32040, data: { reason: 'not_in_scope', principal: 'me' } });
    } finally {
      await wrap.close();
    }
  });

  it('a template the pin does not pin is known by the listing: a read of its URI is refused after it', async () => {
    const wrap = await startWrapInProcess(pinFile, undefined, ['--principals', await gatewayFile(true)]);
    const reads = async (): Promise<string[]> =>
      (await readFile(join(dir, 'calls.log'), 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line.startsWith('read:'));
    try {
      const before = await reads();
      // Templates are not pinned and none was listed yet: the read goes upstream as before.
      expect((await wrap.client.readResource({ uri: 'note:///1' })).contents).toHaveLength(1);
      expect(await reads()).toEqual([...before, 'read:note:///1']);
      // The listing carried note:///{id}, out of the scope (local: ['echo']): left out, then refused.
      expect((await wrap.client.listResourceTemplates()).resourceTemplates).toEqual([]);
      const refused = await refusal(wrap.client.readResource({ uri: 'note:///2' }));
      expect(refused).toMatchObject({
        code: -32040,
        data: { reason: 'not_in_scope', server: 'local', template: 'note:///{id}', principal: 'me' },
      });
      expect(await reads()).toEqual([...before, 'read:note:///1']);
    } finally {
      await wrap.close();
    }
  });

  it('a local user no principal names sees nothing and calls nothing (fail closed, logged)', async () => {
    const wrap = await startWrapInProcess(pinFile, undefined, [
      '--principals',
      await gatewayFile('nobody-is-called-this'),
    ]);
    try {
      expect((await wrap.client.listTools()).tools).toEqual([]);
      const refused = await refusal(wrap.client.callTool({ name: 'echo', arguments: { text: 'x' } }));
      expect(refused).toMatchObject({ code: -32040, data: { reason: 'not_in_scope', principal: null } });
      expect(wrap.events('principal.unresolved')).toHaveLength(1);
    } finally {
      await wrap.close();
    }
  });
});

describe('principals recognized by a verified token on a resource-server route', () => {
  const SCOPE = 'mcp:tools';
  let idp: TestIdentityProvider;
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let base: string;

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateful-sse', tools: defaultTools() });
    idp = await startTestIdentityProvider();
    base = `http://127.0.0.1:${await freePort()}`;
    const auth = {
      mode: 'resource-server',
      resource: `${base}/files/mcp`,
      issuer: idp.issuer,
      scopes: [SCOPE],
      upstreamCredential: { kind: 'forward' },
    };
    gateway = await startGatewayHarness([{ ...pinFor('files', upstream.url, defaultTools()), auth }], {
      listen: { host: '127.0.0.1', port: Number(new URL(base).port) },
      principals: [
        {
          name: 'bot',
          oauth: { issuer: idp.issuer, sub: 'bot', scopes: [SCOPE] },
          servers: { files: ['echo'] },
        },
        { name: 'app', oauth: { clientId: 'ci-app' }, servers: { files: ['add'] } },
      ],
    });
  }, 20_000);

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await idp?.close();
  });

  const bearer = async (sub: string, azp?: string): Promise<{ headers: Record<string, string> }> => {
    const token = await idp.mint({
      sub,
      aud: `${base}/files/mcp`,
      scope: SCOPE,
      ...(azp === undefined ? {} : { azp }),
    });
    return { headers: { authorization: `Bearer ${token}` } };
  };

  it('by subject and scopes, and by client id (azp): each sees and calls its own scope', async () => {
    const bot = await connectV1Client(`${base}/files/mcp`, await bearer('bot'));
    const app = await connectV1Client(`${base}/files/mcp`, await bearer('someone', 'ci-app'));
    try {
      expect((await bot.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
      expect((await app.listTools()).tools.map((tool) => tool.name)).toEqual(['add']);
      const refused = await refusal(bot.callTool({ name: 'add', arguments: { a: 1, b: 1 } }));
      expect(refused).toMatchObject({ code: -32040, data: { reason: 'not_in_scope', principal: 'bot' } });
      expect(upstream.callCount('add')).toBe(0);
      expect(textOf(await app.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).toBe('3');
    } finally {
      await Promise.all([bot.close(), app.close()]);
    }
  });

  it('a valid token no principal names is refused 403 (fail closed)', async () => {
    const reply = await postRaw(
      `${base}/files/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      (await bearer('eve')).headers,
    );
    expect(reply.status).toBe(403);
    expect(errorOf(reply)).toMatchObject({ code: -32040, data: { reason: 'not_in_scope', principal: null } });
  });
});
