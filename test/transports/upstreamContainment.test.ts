import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { spawnGateway, writeGatewayFiles, type GatewayProcess } from '../operate/gatewayProcess.js';
import { callRequest, openRawSession, postRaw, statelessEnvelope } from '../support/rawMcp.js';
import {
  connectWrap,
  rawFixtureCommand,
  RAW_ECHO,
  stdioPinFor,
  writePin,
  type WrapHandle,
} from './support.js';
import { rejectionOf } from '../support/rejection.js';

// Finding 10 of issue 11: a stdio upstream listing one tool nested 20,000 levels deep crashed the
// whole `toolpin serve` process (and `wrap`). And findings 7/4 on the bridged path: an answer with
// `"error": null` beside a drifted listing must never reach the client.

const LIST = { jsonrpc: '2.0', id: 'list-1', method: 'tools/list', params: {} };

const ENVELOPE = statelessEnvelope();

function errorOf(message: unknown): { code?: number; data?: Record<string, unknown> } | undefined {
  return (message as { error?: { code?: number; data?: Record<string, unknown> } }).error;
}

function toolNames(message: unknown): string[] {
  const tools = (message as { result?: { tools?: { name: string }[] } }).result?.tools ?? [];
  return tools.map((tool) => tool.name);
}

describe('toolpin serve: a stdio upstream answering with what no SDK server sends', () => {
  let dir: string;
  /** While this file exists the fixture answers tools/list in the mode it holds, else cleanly. */
  let badFile: string;
  let files: { file: string; remove: () => Promise<void> };
  // One `toolpin serve` process for the file: each test sets the mode its sessions' children (and
  // the shared upstream) read at each listing, and its process is still up after every test.
  let gateway: GatewayProcess;

  /** The fixture answers tools/list in `mode` until the test removes the file. */
  async function setMode(mode: string): Promise<void> {
    await writeFile(badFile, mode);
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-contain-'));
    badFile = join(dir, 'bad');
    files = await writeGatewayFiles([
      stdioPinFor('raw', rawFixtureCommand(), [RAW_ECHO], { TOOLPIN_RAW_MODE_FILE: badFile }),
    ]);
    gateway = await spawnGateway(files.file);
  });

  afterAll(async () => {
    await gateway?.kill();
    await files?.remove();
    await rm(dir, { recursive: true, force: true });
  });

  it('survives a listing nested 20,000 levels deep: -32042 too_deep, and the next client is served', async () => {
    await setMode('deep');
    const from = gateway.logs.length;
    const url = `${gateway.url}/raw/mcp`;
    const first = await openRawSession(url);
    const listed = await postRaw(url, LIST, first);
    expect(listed.status).toBe(200);
    expect(listed.messages).toHaveLength(1);
    expect(errorOf(listed.messages[0])).toMatchObject({
      code: -32042,
      data: { reason: 'too_deep', server: 'raw' },
    });
    // A call decided by a fetch on miss meets the same listing: refused, never executed blind.
    const call = await postRaw(url, callRequest('call-1', 'echo', { text: 'hi' }), first);
    expect(errorOf(call.messages[0])).toMatchObject({ code: -32040 });

    await unlink(badFile);
    const second = await openRawSession(url, { authorization: 'Bearer second' });
    const clean = await postRaw(url, LIST, second);
    expect(toolNames(clean.messages[0])).toEqual(['echo']);
    const echoed = await postRaw(url, callRequest('call-2', 'echo', { text: 'still here' }), second);
    expect(echoed.messages[0]).toMatchObject({ result: { content: [{ type: 'text', text: 'still here' }] } });

    expect(await gateway.waitForEvent('upstream.invalid_message', from)).toMatchObject({
      server: 'raw',
      reason: 'too_deep',
      answered: true,
    });
    // The log line says what was wrong, not what the upstream sent.
    expect(JSON.stringify(gateway.events('upstream.invalid_message'))).not.toContain('properties');
    await expect(Promise.race([gateway.exited, Promise.resolve('running')])).resolves.toBe('running');
  });

  it('survives the same listing for a 2026-07-28 client (shared upstream): -32042, process up', async () => {
    await setMode('deep');
    const url = `${gateway.url}/raw/mcp`;
    const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
    const listed = await postRaw(url, { ...LIST, params: { _meta: ENVELOPE } }, headers);
    expect(errorOf(listed.messages[0])).toMatchObject({ code: -32042, data: { reason: 'too_deep' } });

    await unlink(badFile);
    const client = new Client(
      { name: 'toolpin-contain-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: 'Bearer other' } },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    } finally {
      await client.close();
    }
    await expect(Promise.race([gateway.exited, Promise.resolve('running')])).resolves.toBe('running');
  });

  it.each([
    [
      '"error": null beside a drifted listing',
      'error-null',
      'a response needs exactly one of result and error',
    ],
    ['an error whose code is not an integer', 'bad-code', 'error.code is not an integer'],
  ])(
    'drops %s: -32042 invalid_message in its place, nothing of it reaches the client',
    async (_label, mode, problem) => {
      await setMode(mode);
      const from = gateway.logs.length;
      const url = `${gateway.url}/raw/mcp`;
      const session = await openRawSession(url);
      const listed = await postRaw(url, LIST, session);
      expect(listed.text).not.toContain('id_rsa');
      expect(errorOf(listed.messages[0])).toMatchObject({
        code: -32042,
        data: { reason: 'invalid_message', server: 'raw' },
      });
      // Log lines travel on the process's stdout: waited for, bounded by the test's timeout.
      expect(await gateway.waitForEvent('upstream.invalid_message', from)).toMatchObject({
        reason: 'invalid_message',
        problem,
        answered: true,
      });
    },
  );
});

describe('toolpin wrap: a stdio upstream listing a tool nested 20,000 levels deep', () => {
  let dir: string;
  let wrap: WrapHandle | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-contain-wrap-'));
  });

  afterEach(async () => {
    await wrap?.client.close();
    wrap = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('answers the listing with -32042 and goes on serving the session', async () => {
    const badFile = join(dir, 'bad');
    await writeFile(badFile, 'deep');
    const pinFile = await writePin(dir, stdioPinFor('raw', rawFixtureCommand(), [RAW_ECHO]));
    wrap = await connectWrap(pinFile, rawFixtureCommand(), { TOOLPIN_RAW_MODE_FILE: badFile });
    const failure = await rejectionOf(wrap.client.listTools(), McpError);
    expect(failure).toMatchObject({ code: -32042, data: { reason: 'too_deep', server: 'raw' } });

    await unlink(badFile);
    expect((await wrap.client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    const result = await wrap.client.callTool({ name: 'echo', arguments: { text: 'after' } });
    expect(result.content).toEqual([{ type: 'text', text: 'after' }]);
    expect(wrap.events('upstream.invalid_message')).toEqual([
      expect.objectContaining({ reason: 'too_deep', answered: true }),
    ]);
    expect(wrap.transport.pid).not.toBeNull();
  });
});
