import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { spawnGateway, writeGatewayFiles, type GatewayProcess } from '../operate/gatewayProcess.js';
import { callRequest, openRawSession, postRaw, statelessEnvelope } from '../support/rawMcp.js';
import { connectWrap, stdioPinFor, writePin, type WrapHandle } from './support.js';
import { rejectionOf } from '../support/rejection.js';

// Finding 10 of issue 11: a stdio upstream listing one tool nested 20,000 levels deep crashed the
// whole `toolpin serve` process (and `wrap`). And findings 7/4 on the bridged path: an answer with
// `"error": null` beside a drifted listing must never reach the client.

/** The raw stdio fixture: prints its answers as exact text, no SDK (test/fixtures/rawStdioServer.mjs). */
const RAW_SERVER = fileURLToPath(new URL('../fixtures/rawStdioServer.mjs', import.meta.url));
const RAW_COMMAND = [process.execPath, RAW_SERVER];

/** The one tool the raw fixture lists in its clean mode: what is pinned. */
const ECHO = {
  name: 'echo',
  description: 'Echoes the given text back unchanged.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

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
  /** While this file exists the fixture answers tools/list in its bad mode, else cleanly. */
  let badFile: string;
  let files: { file: string; remove: () => Promise<void> };
  let gateway: GatewayProcess;

  async function start(mode: string): Promise<void> {
    const env = { TOOLPIN_RAW_MODE: mode, TOOLPIN_RAW_MODE_IF: badFile };
    files = await writeGatewayFiles([stdioPinFor('raw', RAW_COMMAND, [ECHO], env)]);
    gateway = await spawnGateway(files.file);
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-contain-'));
    badFile = join(dir, 'bad');
    await writeFile(badFile, '');
  });

  afterEach(async () => {
    await gateway?.kill();
    await files?.remove();
    await rm(dir, { recursive: true, force: true });
  });

  it('survives a listing nested 20,000 levels deep: -32042 too_deep, and the next client is served', async () => {
    await start('deep');
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

    expect(await gateway.waitForEvent('upstream.invalid_message')).toMatchObject({
      server: 'raw',
      reason: 'too_deep',
      answered: true,
    });
    // The log line says what was wrong, not what the upstream sent.
    expect(JSON.stringify(gateway.events('upstream.invalid_message'))).not.toContain('properties');
    await expect(Promise.race([gateway.exited, Promise.resolve('running')])).resolves.toBe('running');
  });

  it('survives the same listing for a 2026-07-28 client (shared upstream): -32042, process up', async () => {
    await start('deep');
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
      await start(mode);
      const url = `${gateway.url}/raw/mcp`;
      const session = await openRawSession(url);
      const listed = await postRaw(url, LIST, session);
      expect(listed.text).not.toContain('id_rsa');
      expect(errorOf(listed.messages[0])).toMatchObject({
        code: -32042,
        data: { reason: 'invalid_message', server: 'raw' },
      });
      // Log lines travel on the process's stdout: waited for, bounded by the test's timeout.
      expect(await gateway.waitForEvent('upstream.invalid_message')).toMatchObject({
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
    await writeFile(badFile, '');
    const pinFile = await writePin(dir, stdioPinFor('raw', RAW_COMMAND, [ECHO]));
    wrap = await connectWrap(pinFile, RAW_COMMAND, {
      TOOLPIN_RAW_MODE: 'deep',
      TOOLPIN_RAW_MODE_IF: badFile,
    });
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
