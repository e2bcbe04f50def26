import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { connectV1Client, defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { fixtureCommand, listStdioCatalog, stdioPinFor } from '../transports/support.js';
import { rejectionOf } from '../support/rejection.js';

// A value that must never reach a log line or an error: the arguments are the client's.
const SECRET = 'SECRET-ARGUMENT-VALUE-7f3a';

const LOOKUP: Tool = {
  name: 'lookup',
  description: 'Looks a record up by id.',
  inputSchema: {
    type: 'object',
    properties: { id: { type: 'string' } },
    required: ['id'],
    additionalProperties: false,
  },
};

const REPORT: Tool = {
  name: 'report',
  description: 'Answers its structured argument as structured content.',
  inputSchema: { type: 'object', properties: { structured: {} } },
  outputSchema: {
    type: 'object',
    properties: { count: { type: 'integer' } },
    required: ['count'],
  },
};

const SEARCH: Tool = {
  name: 'search',
  description: 'Searches; verbose is optional.',
  inputSchema: {
    type: 'object',
    properties: { q: { type: 'string' }, verbose: { type: 'boolean' } },
    required: ['q'],
    additionalProperties: false,
  },
};

const TOOLS = [...defaultTools(), LOOKUP, REPORT, SEARCH];

async function refusal(client: Client, name: string, args: Record<string, unknown>): Promise<McpError> {
  return rejectionOf(client.callTool({ name, arguments: args }), McpError);
}

/** tools/call without the SDK client's own outputSchema check (the gateway's is under test). */
function callRaw(client: Client, name: string, args: Record<string, unknown>) {
  return client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema);
}

describe('gateway: calls and results checked against the pinned schemas', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let client: Client;
  let blocking: Client;
  let loose: Client;
  let strict: Client;

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateful-sse', tools: TOOLS });
    gateway = await startGatewayHarness([
      pinFor('demo', upstream.url, TOOLS),
      { ...pinFor('blocking', upstream.url, TOOLS), onBadOutput: 'block' },
      { ...pinFor('loose', upstream.url, TOOLS), validate: { 'tool:add': false } },
      { ...pinFor('strict', upstream.url, TOOLS), validate: 'strict' },
    ]);
    client = await connectV1Client(`${gateway.url}/demo/mcp`);
    blocking = await connectV1Client(`${gateway.url}/blocking/mcp`);
    loose = await connectV1Client(`${gateway.url}/loose/mcp`);
    strict = await connectV1Client(`${gateway.url}/strict/mcp`);
  });

  afterAll(async () => {
    await Promise.all([client?.close(), blocking?.close(), loose?.close(), strict?.close()]);
    await gateway?.close();
    await upstream?.close();
  });

  it('refuses a call with a wrong type before the upstream: arguments_invalid, pointer and keyword only', async () => {
    const before = upstream.callCount();
    const error = await refusal(client, 'add', { a: SECRET, b: 2 });
    expect(error.code).toBe(-32040);
    expect(error.data).toEqual({
      reason: 'arguments_invalid',
      server: 'demo',
      tool: 'add',
      key: 'tool:add',
      pinned: expect.stringMatching(/^sha256:/),
      observed: expect.stringMatching(/^sha256:/),
      problems: [{ pointer: '/a', keyword: 'type' }],
    });
    expect(upstream.callCount()).toBe(before);
    const blocked = gateway.events('call.blocked').at(-1);
    expect(blocked?.decision).toMatchObject({
      reason: 'arguments_invalid',
      problems: [{ pointer: '/a', keyword: 'type' }],
    });
    expect(JSON.stringify(gateway.logs)).not.toContain(SECRET);
    expect(JSON.stringify(error)).not.toContain(SECRET);
  });

  it('refuses a call missing a required argument, pointing at the missing name', async () => {
    const before = upstream.callCount();
    const error = await refusal(client, 'add', { a: 1 });
    expect(error.data).toMatchObject({
      reason: 'arguments_invalid',
      problems: [{ pointer: '/b', keyword: 'required' }],
    });
    expect(upstream.callCount()).toBe(before);
  });

  it('refuses an extra property where the pinned schema says additionalProperties: false', async () => {
    const before = upstream.callCount();
    const error = await refusal(client, 'lookup', { id: 'r1', [SECRET]: SECRET });
    expect(error.data).toMatchObject({
      reason: 'arguments_invalid',
      problems: [{ pointer: '', keyword: 'additionalProperties' }],
    });
    expect(upstream.callCount()).toBe(before);
    expect(JSON.stringify(gateway.logs)).not.toContain(SECRET);
  });

  it('reads null for an optional argument as absent and forwards it as sent; validate: strict refuses it', async () => {
    const before = upstream.callCount('search');
    const result = await client.callTool({ name: 'search', arguments: { q: 'x', verbose: null } });
    // The upstream executed the arguments as the client sent them, null included.
    expect(result.content).toEqual([{ type: 'text', text: 'search called with {"q":"x","verbose":null}' }]);
    expect(upstream.callCount('search')).toBe(before + 1);
    // A null the schema requires is still a misfit.
    const required = await refusal(client, 'search', { q: null });
    expect(required.data).toMatchObject({ problems: [{ pointer: '/q', keyword: 'type' }] });
    const error = await refusal(strict, 'search', { q: 'x', verbose: null });
    expect(error.data).toMatchObject({
      reason: 'arguments_invalid',
      server: 'strict',
      problems: [{ pointer: '/verbose', keyword: 'type' }],
    });
    expect(upstream.callCount('search')).toBe(before + 1);
  });

  it('allows a call whose arguments fit', async () => {
    const before = upstream.callCount('add');
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(result.content).toEqual([{ type: 'text', text: '5' }]);
    expect(upstream.callCount('add')).toBe(before + 1);
  });

  it('flags a result whose structuredContent does not fit the pinned outputSchema (onBadOutput default: flag)', async () => {
    const flaggedBefore = gateway.events('call.flagged').length;
    const result = await callRaw(client, 'report', { structured: { count: 'many' } });
    expect(result.structuredContent).toEqual({ count: 'many' });
    const flagged = gateway.events('call.flagged');
    expect(flagged).toHaveLength(flaggedBefore + 1);
    expect(flagged.at(-1)?.decision).toMatchObject({
      reason: 'output_invalid',
      server: 'demo',
      tool: 'report',
      problems: [{ pointer: '/count', keyword: 'type' }],
    });
    const fits = await callRaw(client, 'report', { structured: { count: 3 } });
    expect(fits.structuredContent).toEqual({ count: 3 });
    expect(gateway.events('call.flagged')).toHaveLength(flaggedBefore + 1);
  });

  it('replaces such a result with output_invalid under onBadOutput: block', async () => {
    const error = await rejectionOf(callRaw(blocking, 'report', { structured: { total: 1 } }), McpError);
    expect(error.code).toBe(-32040);
    expect(error.data).toMatchObject({
      reason: 'output_invalid',
      server: 'blocking',
      tool: 'report',
      problems: [{ pointer: '/count', keyword: 'required' }],
    });
    const fits = await callRaw(blocking, 'report', { structured: { count: 1 } });
    expect(fits.structuredContent).toEqual({ count: 1 });
  });

  it('lets a misfit call through for a tool the pin opts out (validate: false)', async () => {
    const before = upstream.callCount('add');
    const result = await loose.callTool({ name: 'add', arguments: { a: 1 } });
    expect(result.content).toEqual([{ type: 'text', text: 'NaN' }]);
    expect(upstream.callCount('add')).toBe(before + 1);
    // Only the tool named is opted out.
    const error = await refusal(loose, 'lookup', { id: 7 });
    expect(error.data).toMatchObject({ reason: 'arguments_invalid', server: 'loose' });
  });
});

describe('gateway: a bridged (stdio) route checks the same arguments', () => {
  let gateway: GatewayHarness;
  let client: Client;
  let dir: string;
  let callLog: string;

  /** The tools/call requests the stdio child executed (its own call counter). */
  async function executedCalls(): Promise<string[]> {
    return (await readFile(callLog, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-schemas-'));
    callLog = join(dir, 'calls.log');
    const tools = await listStdioCatalog(fixtureCommand());
    gateway = await startGatewayHarness([
      stdioPinFor('stdio', fixtureCommand(), tools, { TOOLPIN_FIXTURE_CALL_LOG: callLog }),
    ]);
    client = await connectV1Client(`${gateway.url}/stdio/mcp`);
  }, 20_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a misfit call with arguments_invalid and allows a fitting one', async () => {
    const error = await refusal(client, 'add', { a: SECRET, b: 2 });
    expect(error.code).toBe(-32040);
    expect(error.data).toMatchObject({
      reason: 'arguments_invalid',
      server: 'stdio',
      problems: [{ pointer: '/a', keyword: 'type' }],
    });
    expect(gateway.events('call.blocked').at(-1)?.decision).toMatchObject({ reason: 'arguments_invalid' });
    expect(await executedCalls()).toEqual([]);
    const result = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
    expect(result.content).toEqual([{ type: 'text', text: '3' }]);
    expect(await executedCalls()).toEqual(['add']);
    expect(JSON.stringify(gateway.logs)).not.toContain(SECRET);
  });
});
