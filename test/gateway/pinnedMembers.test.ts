import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { parse as parseYaml } from 'yaml';
import { connectV1Client, defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { openRawSession, postRaw } from '../support/rawMcp.js';
import { runToolpin } from '../support/runToolpin.js';
import { rejectionOf } from '../support/rejection.js';

// Spawning the CLI takes about a second on a busy machine.
const SPAWNS = 60_000;
const HASHED = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'];

/** An MCP Apps tool: icons, an execution hint, `_meta` naming its UI resource, and a vendor key. */
const WEATHER = {
  name: 'get_weather',
  title: 'Get weather',
  description: 'Shows the weather for a city.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  icons: [{ src: 'https://example.com/weather.png', mimeType: 'image/png' }],
  execution: { taskSupport: 'optional' },
  _meta: { 'ui/resourceUri': 'ui://weather/app.html' },
  'x-foo': { tier: 'gold' },
} as Tool;

interface PinDocument {
  name: string;
  definitions: Record<string, Record<string, unknown>>;
  [member: string]: unknown;
}

/** Every tool of one tools/list, exactly as its bytes say (a raw client keeps every member). */
async function rawTools(url: string): Promise<Record<string, unknown>[]> {
  const session = await openRawSession(url);
  const reply = await postRaw(url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, session);
  const answer = reply.messages.find((message) => (message as { id?: unknown }).id === 1) as {
    result: { tools: Record<string, unknown>[] };
  };
  return answer.result.tools;
}

async function rawTool(url: string, name: string): Promise<Record<string, unknown> | undefined> {
  return (await rawTools(url)).find((tool) => tool.name === name);
}

async function callError(client: Client, name: string): Promise<McpError> {
  return rejectionOf(client.callTool({ name, arguments: { city: 'Paris' } }), McpError);
}

describe('members outside the digest: pinned by value, stripped when not pinned', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let apps: Client;
  let earlier: Client;
  let earlierFile: string;

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateful-sse', tools: [WEATHER, ...defaultTools()] });
    const run = await runToolpin(['pin', '--name', 'apps', '--url', upstream.url]);
    expect(run.code).toBe(0);
    const pinned = parseYaml(run.stdout) as PinDocument;
    // The same pin as a file written before members were pinned by value: the six members only.
    const sixOnly = Object.fromEntries(
      Object.entries(pinned.definitions).map(([key, definition]) => [
        key,
        Object.fromEntries(Object.entries(definition).filter(([member]) => HASHED.includes(member))),
      ]),
    );
    gateway = await startGatewayHarness([pinned, { ...pinned, name: 'earlier', definitions: sixOnly }]);
    earlierFile = join(gateway.dir, 'servers', 'earlier.json');
    apps = await connectV1Client(`${gateway.url}/apps/mcp`);
    earlier = await connectV1Client(`${gateway.url}/earlier/mcp`);
  }, SPAWNS);

  afterAll(async () => {
    await apps.close();
    await earlier.close();
    await gateway.close();
    await upstream.close();
  });

  it('`toolpin pin` records every member; the client sees every one of them, unchanged', async () => {
    const listed = await apps.listTools();
    const weather = listed.tools.find((tool) => tool.name === 'get_weather');
    expect(weather).toMatchObject({
      icons: WEATHER.icons,
      execution: WEATHER.execution,
      _meta: WEATHER._meta,
    });
    expect(await rawTool(`${gateway.url}/apps/mcp`, 'get_weather')).toEqual(WEATHER);
    const result = await apps.callTool({ name: 'get_weather', arguments: { city: 'Paris' } });
    expect(result.isError).toBeUndefined();
    expect(gateway.events('pin.unrecorded_members')).toEqual([]);
  });

  it('serves a pin of the earlier format with the six members only, and says so once', async () => {
    const url = `${gateway.url}/earlier/mcp`;
    const sixMembers = Object.fromEntries(
      Object.entries(WEATHER).filter(([member]) => HASHED.includes(member)),
    );
    expect(await rawTool(url, 'get_weather')).toEqual(sixMembers);
    const listed = await earlier.listTools();
    expect(listed.tools.find((tool) => tool.name === 'get_weather')).not.toHaveProperty('_meta');
    expect(await rawTool(url, 'get_weather')).toEqual(sixMembers);
    const notices = gateway.events('pin.unrecorded_members');
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({
      server: 'earlier',
      action: 'stripped',
      tools: [
        { key: 'tool:get_weather', tool: 'get_weather', members: ['_meta', 'execution', 'icons', 'x-foo'] },
      ],
    });
    expect(String(notices[0]?.msg)).toContain(`toolpin approve ${earlierFile}`);
    const result = await earlier.callTool({ name: 'get_weather', arguments: { city: 'Paris' } });
    expect(result.isError).toBeUndefined();
  });

  it('strips a vendor key the server adds after pinning; the tool stays verified', async () => {
    upstream.driftTool('get_weather', { 'x-bar': 'injected' } as Partial<Tool>);
    const direct = await rawTool(upstream.url, 'get_weather');
    expect(direct).toHaveProperty('x-bar', 'injected');
    expect(await rawTool(`${gateway.url}/apps/mcp`, 'get_weather')).toEqual(WEATHER);
    const result = await apps.callTool({ name: 'get_weather', arguments: { city: 'Paris' } });
    expect(result.isError).toBeUndefined();
    expect(gateway.events('pin.unrecorded_members').filter((line) => line.server === 'apps')).toEqual([
      expect.objectContaining({
        tools: [{ key: 'tool:get_weather', tool: 'get_weather', members: ['x-bar'] }],
      }),
    ]);
  });

  it('blocks the tool when its pinned _meta changes: gone from the listing, its call refused -32040', async () => {
    const evil = { 'ui/resourceUri': 'ui://weather/evil.html' };
    upstream.driftTool('get_weather', { _meta: evil });
    expect((await rawTool(upstream.url, 'get_weather'))?._meta).toEqual(evil);
    const calledBefore = upstream.callCount('get_weather');
    const listed = await apps.listTools();
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo', 'slow']);
    const error = await callError(apps, 'get_weather');
    expect(error.code).toBe(-32040);
    expect(error.data).toMatchObject({
      reason: 'tool_drifted',
      tool: 'get_weather',
      key: 'tool:get_weather',
    });
    expect(upstream.callCount('get_weather')).toBe(calledBefore);
    const drift = gateway.events('catalog.drift').filter((line) => line.server === 'apps');
    expect(drift.at(-1)?.drift).toEqual([
      expect.objectContaining({
        kind: 'changed',
        key: 'tool:get_weather',
        members: ['_meta'],
        paths: ['/_meta/ui~1resourceUri'],
        text: [
          {
            path: '/_meta/ui~1resourceUri',
            diff: '[-ui://weather/app.html-] [+ui://weather/evil.html+]',
            ops: [
              { op: 'delete', text: 'ui://weather/app.html' },
              { op: 'insert', text: 'ui://weather/evil.html' },
            ],
          },
        ],
      }),
    ]);
  });

  it(
    'keeps the earlier pin working on the six members, and `toolpin approve` records the rest',
    async () => {
      const url = `${gateway.url}/earlier/mcp`;
      // The _meta change is invisible to a pin that does not record _meta: stripped, not drift.
      expect((await rawTool(url, 'get_weather'))?._meta).toBeUndefined();
      const check = await runToolpin(['check', earlierFile]);
      expect(check.code).toBe(0);
      expect(check.stdout).toContain(
        'not pinned get_weather (tool:get_weather): _meta, execution, icons, x-bar, x-foo',
      );
      const approve = await runToolpin(['approve', earlierFile, '--yes']);
      expect(approve.code).toBe(0);
      expect(approve.stdout).toContain('pin _meta, execution, icons, x-bar, x-foo of get_weather by value');
      const written = JSON.parse(await readFile(earlierFile, 'utf8')) as PinDocument;
      expect(written.definitions['tool:get_weather']?._meta).toEqual({
        'ui/resourceUri': 'ui://weather/evil.html',
      });
      await gateway.running.reload();
      const served = await rawTool(url, 'get_weather');
      expect(served).toMatchObject({
        _meta: { 'ui/resourceUri': 'ui://weather/evil.html' },
        'x-bar': 'injected',
      });
      // No member left unpinned (this pin is tools-only, which the check also says, on its own line).
      expect((await runToolpin(['check', earlierFile])).stdout).not.toMatch(/^not pinned /m);
    },
    SPAWNS,
  );
});
