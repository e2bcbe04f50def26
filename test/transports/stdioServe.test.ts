import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, ToolListChangedNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { connectV1Client, everythingStdioCommand } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { initializeRequest, postRaw } from '../support/rawMcp.js';
import { catalogAtStart, expectProgressBeforeResult, fixtureCommand, stdioPinFor } from './support.js';
import { rejectionOf } from '../support/rejection.js';

/** The error a rejected SDK call ends with. */
async function failureOf(promise: Promise<unknown>): Promise<McpError> {
  return rejectionOf(promise, McpError);
}

describe('serve: @modelcontextprotocol/server-everything over stdio behind the HTTP front', () => {
  let gateway: GatewayHarness;
  let client: Client;
  let pinned: Tool[];

  beforeAll(async () => {
    pinned = await catalogAtStart(everythingStdioCommand());
    gateway = await startGatewayHarness([stdioPinFor('everything', everythingStdioCommand(), pinned)]);
    client = await connectV1Client(`${gateway.url}/everything/mcp`);
  }, 20_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
  });

  it('lists the pinned catalog and calls echo through the spawned child', async () => {
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual(pinned.map((tool) => tool.name).sort());
    const result = await client.callTool({ name: 'echo', arguments: { message: 'over stdio' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: over stdio' }]);
    expect(gateway.events('catalog.verified').length).toBeGreaterThanOrEqual(1);
  });

  it('relays the progress notifications of a long-running tool before its result', async () => {
    const result = await expectProgressBeforeResult(client);
    expect(JSON.stringify(result.content)).toContain('Long running operation completed');
  });
});

describe('serve: a drifting stdio server behind the HTTP front', () => {
  let dir: string;
  let callLog: string;
  let gateway: GatewayHarness;
  const clients: Client[] = [];

  async function connect(): Promise<Client> {
    const client = await connectV1Client(`${gateway.url}/drifting/mcp`);
    clients.push(client);
    return client;
  }

  async function executedCalls(): Promise<string[]> {
    return (await readFile(callLog, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-stdio-'));
    callLog = join(dir, 'calls.log');
    const tools = await catalogAtStart(fixtureCommand());
    const env = { TOOLPIN_FIXTURE_CALL_LOG: callLog, TOOLPIN_FIXTURE_STDERR: 'fixture says hello' };
    gateway = await startGatewayHarness([stdioPinFor('drifting', fixtureCommand(), tools, env)]);
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('blocks the call of a tool that drifted mid-session with tool_drifted, never reaching the child', async () => {
    const client = await connect();
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    await client.callTool({ name: 'rug-pull', arguments: {} });
    await changed;
    const relisted = await client.listTools();
    expect(relisted.tools.map((tool) => tool.name)).not.toContain('echo');
    const error = await failureOf(client.callTool({ name: 'echo', arguments: { text: 'hi' } }));
    expect(error.code).toBe(-32040);
    expect(error.data).toMatchObject({
      reason: 'tool_drifted',
      server: 'drifting',
      tool: 'echo',
      key: 'tool:echo',
    });
    expect(await executedCalls()).toEqual(['rug-pull']);
    expect(gateway.events('catalog.drift')).toEqual([
      expect.objectContaining({ drift: [expect.objectContaining({ kind: 'changed', key: 'tool:echo' })] }),
    ]);
    expect(gateway.events('call.blocked')).toHaveLength(1);
  });

  it("logs the child's stderr tagged with server and session", async () => {
    const client = await connect();
    await client.listTools();
    const lines = gateway.events('upstream.stderr');
    expect(lines).toEqual([
      expect.objectContaining({
        server: 'drifting',
        line: 'fixture says hello',
        session: expect.stringMatching(/^[0-9a-f]{12}$/),
      }),
    ]);
  });

  it('spawns one child per session: a drift in one session does not touch the other', async () => {
    const first = await connect();
    const second = await connect();
    await first.callTool({ name: 'rug-pull', arguments: {} });
    await first.listTools();
    expect((await second.listTools()).tools.map((tool) => tool.name)).toContain('echo');
    const echoed = await second.callTool({ name: 'echo', arguments: { text: 'still pinned' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'still pinned' }]);
    await expect(first.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toMatchObject({
      code: -32040,
    });
  });

  it('answers a pending call with -32041 when the child crashes, and serves the next session with a new child', async () => {
    const client = await connect();
    await client.listTools();
    const error = await failureOf(client.callTool({ name: 'crash', arguments: {} }));
    expect(error.code).toBe(-32041);
    expect(error.message).toMatch(/upstream process exited \(code 3\)/);
    // The session ended with its child: the gateway forgot it.
    await expect(client.listTools()).rejects.toThrow();
    const next = await connect();
    const echoed = await next.callTool({ name: 'echo', arguments: { text: 'back' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'back' }]);
  });
});

describe('serve: a stdio upstream that cannot be started', () => {
  it('answers the initialize with HTTP 502 and -32041, and keeps serving', async () => {
    const tools = await catalogAtStart(fixtureCommand());
    const gateway = await startGatewayHarness([
      stdioPinFor('missing', ['/nonexistent/toolpin-server'], tools),
    ]);
    try {
      const reply = await postRaw(`${gateway.url}/missing/mcp`, initializeRequest(1));
      expect(reply.status).toBe(502);
      expect(reply.messages).toEqual([
        expect.objectContaining({ id: 1, error: expect.objectContaining({ code: -32041 }) }),
      ]);
      expect(gateway.events('upstream.start_failed')).toHaveLength(1);
      const again = await postRaw(`${gateway.url}/missing/mcp`, initializeRequest(2));
      expect(again.status).toBe(502);
    } finally {
      await gateway.close();
    }
  });
});
