import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { loadPinFile } from '@toolpin/gateway';
import { connectV1Client, connectV2Client, defaultTools } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { startPerTokenServer, type PerTokenServer } from '../support/perTokenServer.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, openRawSession, postRaw } from '../support/rawMcp.js';
import { runToolpin } from '../support/runToolpin.js';
import { until } from '../support/until.js';
import { refusal, textOf } from '../support/rejection.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const KEYS = { alice: 'alice-key-1', bob: 'bob-key-2', carol: 'carol-key-3' } as const;

/** The upstream answers each bearer token with its own catalog: alice's echo and add, bob's own echo and slow. */
function catalogs(): Record<string, Tool[]> {
  const [echo, add, slow] = defaultTools() as [Tool, Tool, Tool];
  const bobsEcho: Tool = { ...echo, description: 'Echoes the given text, for bob.' };
  return { 'tok-a': [echo, add], 'tok-b': [bobsEcho, slow] };
}

describe('pins per authorization: each principal checked against its own pinned catalog', () => {
  let upstream: PerTokenServer;
  let gateway: GatewayHarness;
  let pinFile: string;
  const clients: { close(): Promise<void> }[] = [];
  const headers = (principal: keyof typeof KEYS, token: string): Record<string, string> => ({
    'x-toolpin-key': KEYS[principal],
    authorization: `Bearer ${token}`,
  });

  beforeAll(async () => {
    upstream = await startPerTokenServer(catalogs());
    const principals = Object.entries(KEYS).map(([name, key]) => ({
      name,
      apiKey: { sha256: sha256(key) },
      servers: { '*': '*' },
    }));
    // The file's own catalog is alice's (what `toolpin pin` wrote with her token); then each
    // principal's own is recorded by `toolpin pin --as`, with that principal's token.
    gateway = await startGatewayHarness(
      [
        pinFor('shop', upstream.url, catalogs()['tok-a']!),
        { ...pinFor('kiosk', upstream.url, catalogs()['tok-a']!), principalFirstUse: true },
      ],
      { principals },
    );
    pinFile = join(gateway.dir, 'servers', 'shop.json');
    for (const [principal, token] of [
      ['alice', 'tok-a'],
      ['bob', 'tok-b'],
    ] as const) {
      const run = await runToolpin([
        'pin',
        '--name',
        'shop',
        '--url',
        upstream.url,
        '--header',
        `Authorization: Bearer ${token}`,
        '--as',
        principal,
        '--out',
        pinFile,
      ]);
      expect(run.stderr).toContain(`as ${principal}`);
      expect(run.code).toBe(0);
    }
    await gateway.running.reload();
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await gateway?.close();
    await upstream?.close();
  });

  it('records one catalog per principal, each the published derivation, the file’s own kept', async () => {
    const config = await loadPinFile(pinFile);
    const own = pinFor('shop', upstream.url, catalogs()['tok-a']!) as { pin: { catalog: string } };
    const bobs = pinFor('shop', upstream.url, catalogs()['tok-b']!) as { pin: { catalog: string } };
    expect(config.pin.catalog).toBe(own.pin.catalog);
    expect(config.principalPins?.alice?.pin.catalog).toBe(own.pin.catalog);
    expect(config.principalPins?.bob?.pin.catalog).toBe(bobs.pin.catalog);
    const status = (await (await fetch(`${gateway.running.adminUrl}/status`)).json()) as {
      servers: { name: string; principalCatalogs?: Record<string, string> }[];
    };
    expect(status.servers.find((server) => server.name === 'shop')?.principalCatalogs).toEqual({
      alice: own.pin.catalog,
      bob: bobs.pin.catalog,
    });
    const page = await (await fetch(`${gateway.running.adminUrl}/ui`)).text();
    expect(page).toContain('catalogs per principal');
    expect(page).toContain(bobs.pin.catalog);
    // The entry holds no credential: the token listed with is not written.
    expect(await readFile(pinFile, 'utf8')).not.toContain('tok-b');
  });

  it('each principal sees and calls only its own catalog (v1 and v2 clients, one upstream)', async () => {
    const alice = await connectV1Client(`${gateway.url}/shop/mcp`, { headers: headers('alice', 'tok-a') });
    clients.push(alice);
    expect((await alice.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo']);
    expect(textOf(await alice.callTool({ name: 'add', arguments: { a: 2, b: 3 } }))).toBe('5');
    const bob = await connectV2Client(`${gateway.url}/shop/mcp`, {
      negotiation: 'legacy',
      headers: headers('bob', 'tok-b'),
    });
    clients.push(bob);
    const bobsTools = (await bob.listTools()).tools;
    expect(bobsTools.map((tool) => tool.name).sort()).toEqual(['echo', 'slow']);
    expect(bobsTools.find((tool) => tool.name === 'echo')?.description).toBe(
      'Echoes the given text, for bob.',
    );
    expect(textOf(await bob.callTool({ name: 'echo', arguments: { text: 'b' } }))).toBe('b');
    // add is alice's, not bob's: not pinned for him, refused before the upstream.
    const refused = await refusal(bob.callTool({ name: 'add', arguments: { a: 1, b: 1 } }));
    expect(refused).toMatchObject({ code: -32040, data: { reason: 'tool_not_pinned', tool: 'add' } });
    expect(upstream.callCount('tok-b', 'add')).toBe(0);
  });

  it("one principal's key with another's token never reads the other's catalog", async () => {
    // alice's principal, bob's token: the upstream lists bob's catalog, judged against alice's pin.
    const mixed = await connectV1Client(`${gateway.url}/shop/mcp`, { headers: headers('alice', 'tok-b') });
    clients.push(mixed);
    expect((await mixed.listTools()).tools).toEqual([]);
    const echo = await refusal(mixed.callTool({ name: 'echo', arguments: { text: 'x' } }));
    expect(echo.data).toMatchObject({ reason: 'tool_drifted', tool: 'echo' });
    const slow = await refusal(mixed.callTool({ name: 'slow', arguments: {} }));
    expect(slow.data).toMatchObject({ reason: 'tool_not_pinned', tool: 'slow' });
    expect(upstream.callCount('tok-b', 'echo')).toBe(1);
  });

  it('attack: swapping keys mid-session moves the requests to the other principal’s catalog, never shares one', async () => {
    const url = `${gateway.url}/shop/mcp`;
    const session = await openRawSession(url, headers('alice', 'tok-a'));
    await postRaw(url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, session);
    // Same session id, bob's key, alice's token: decided on bob's catalog (alice's add not his).
    const swapped = await postRaw(url, callRequest(2, 'add', { a: 1, b: 1 }), {
      ...session,
      'x-toolpin-key': KEYS.bob,
    });
    const error = (swapped.messages[0] as { error?: { data?: Record<string, unknown> } }).error;
    expect(error?.data).toMatchObject({ reason: 'tool_not_pinned', tool: 'add' });
    // Back on alice's key: her catalog, as it was.
    const own = await postRaw(url, callRequest(3, 'add', { a: 1, b: 1 }), session);
    expect((own.messages[0] as { result?: unknown }).result).toBeDefined();
  });

  it('a principal with no catalog of its own is refused tool_not_pinned', async () => {
    const carol = await connectV1Client(`${gateway.url}/shop/mcp`, { headers: headers('carol', 'tok-a') });
    clients.push(carol);
    expect((await carol.listTools()).tools).toEqual([]);
    const refused = await refusal(carol.callTool({ name: 'echo', arguments: { text: 'x' } }));
    expect(refused).toMatchObject({ code: -32040, data: { reason: 'tool_not_pinned', server: 'shop' } });
  });

  it('principalFirstUse: a principal with no catalog is trusted on first use into its own entry, written to the file', async () => {
    const kioskFile = join(gateway.dir, 'servers', 'kiosk.json');
    const carol = await connectV1Client(`${gateway.url}/kiosk/mcp`, { headers: headers('carol', 'tok-b') });
    clients.push(carol);
    expect((await carol.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['echo', 'slow']);
    expect(textOf(await carol.callTool({ name: 'echo', arguments: { text: 'c' } }))).toBe('c');
    const written = await until(async () => {
      const config = await loadPinFile(kioskFile).catch(() => undefined);
      return config?.principalPins?.carol === undefined ? undefined : config;
    }, "carol's first-use entry written");
    const bobs = pinFor('kiosk', upstream.url, catalogs()['tok-b']!) as { pin: { catalog: string } };
    expect(written.principalPins?.carol?.pin.catalog).toBe(bobs.pin.catalog);
    // The file's own catalog is untouched: alice's.
    expect(written.pin.catalog).toBe(
      (pinFor('kiosk', upstream.url, catalogs()['tok-a']!) as { pin: { catalog: string } }).pin.catalog,
    );
    // Trusted once: another token for carol afterwards is judged against her entry, not trusted anew.
    const other = await connectV1Client(`${gateway.url}/kiosk/mcp`, { headers: headers('carol', 'tok-a') });
    clients.push(other);
    expect((await other.listTools()).tools.map((tool) => tool.name)).toEqual([]);
  });
});
