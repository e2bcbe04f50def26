import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { runToolpin } from '../support/runToolpin.js';
import { FIXTURE_SERVER } from './support.js';

/** The fixture, listing `ask` only to a client that declared sampling. */
const COMMAND = [process.execPath, FIXTURE_SERVER, '--sampling-tool'];

describe('the client capabilities a pin was listed with', () => {
  let dir: string;
  let pinFile: string;
  let gateway: GatewayHarness | undefined;
  let client: Client | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-capabilities-'));
    pinFile = join(dir, 'local.json');
    const command = COMMAND.map((word) => JSON.stringify(word)).join(' ');
    const pinned = await runToolpin([
      'pin',
      '--name',
      'local',
      '--command',
      command,
      '--capabilities',
      '{"sampling":{}}',
      '--out',
      pinFile,
    ]);
    expect(pinned.code).toBe(0);
  });

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('are recorded by pin, and check lists with them: no false drift', async () => {
    const pin = JSON.parse(await readFile(pinFile, 'utf8')) as Record<string, unknown>;
    expect(pin.clientCapabilities).toEqual({ sampling: {} });
    expect(Object.keys((pin.pin as { tools: object }).tools)).toContain('tool:ask');
    const check = await runToolpin(['check', pinFile]);
    expect(check.stdout + check.stderr).not.toContain('removed');
    expect(check.code).toBe(0);
    // Told to declare none, the server does not list `ask`: the drift the recorded field prevents.
    const without = await runToolpin(['check', pinFile, '--capabilities', '{}']);
    expect(without.code).toBe(1);
    expect(without.stdout).toContain('removed  ask (tool:ask)');
  });

  it("are declared by the gateway's own upstream session (2026-07-28 clients on a stdio route)", async () => {
    const pin = JSON.parse(await readFile(pinFile, 'utf8')) as Record<string, unknown>;
    gateway = await startGatewayHarness([pin]);
    client = new Client(
      { name: 'toolpin-capabilities-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/local/mcp`)));
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name)).toContain('ask');
    expect(gateway.events('catalog.drift')).toEqual([]);
    expect(gateway.events('catalog.verified')).toHaveLength(1);
  });
});
