import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { serializePinFile } from '@toolpin/gateway';
import { connectV1Client, defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';

const APPROVED = 'Echoes the given text back, reviewed wording.';

async function until<T>(probe: () => T | undefined, what: string): Promise<T> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** The error code of a call, or 'ok'. */
async function callOutcome(client: Client, name: string, args: Record<string, unknown>): Promise<unknown> {
  return client.callTool({ name, arguments: args }).then(
    () => 'ok',
    (error: unknown) => (error as { code?: unknown }).code,
  );
}

describe('hot reload of a pin file written in two parts', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let client: Client;

  beforeEach(async () => {
    upstream = await startV1Server({ mode: 'stateless-json' });
    gateway = await startGatewayHarness(
      [pinFor('demo', upstream.url, defaultTools(), { onDrift: 'block-server' })],
      {},
      { format: 'yaml' },
    );
    client = await connectV1Client(`${gateway.url}/demo/mcp`);
  });

  afterEach(async () => {
    await client.close();
    await gateway.close();
    await upstream.close();
  });

  it('never puts the first part in force (onDrift cut off would default to filter), and applies the whole file', async () => {
    const file = join(gateway.dir, 'servers', 'demo.yaml');
    const route = gateway.running.gateway.routes.get('demo');
    expect(route?.guard.config.onDrift).toBe('block-server');
    // The approved catalog: echo with new wording. The complete file ends with its onDrift line.
    const approved = defaultTools().map((tool) =>
      tool.name === 'echo' ? { ...tool, description: APPROVED } : tool,
    );
    const whole = serializePinFile(
      pinFor('demo', upstream.url, approved, { onDrift: 'block-server' }) as unknown as Parameters<
        typeof serializePinFile
      >[0],
      'yaml',
    );
    const onDriftLine = 'onDrift: block-server\n';
    expect(whole).toContain(onDriftLine);
    const firstPart = whole.replace(onDriftLine, '');

    await writeFile(file, firstPart);
    const refusal = await until(
      () => gateway.events('pin.reload_failed')[0],
      'the refusal of the first part',
    );
    expect(refusal).toMatchObject({ file, field: 'onDrift', code: 'GW_PIN_FILE_INVALID', server: 'demo' });
    expect(gateway.events('pin.reloaded')).toEqual([]);
    expect(gateway.running.gateway.routes.get('demo')?.guard.config.onDrift).toBe('block-server');

    // The upstream changes echo to the approved wording. Against the pin still in force that is
    // drift, and block-server refuses every tool of the server; the first part, had it been
    // applied, would have verified echo and allowed add.
    upstream.driftTool('echo', { description: APPROVED });
    await client.listTools();
    expect(await callOutcome(client, 'add', { a: 1, b: 2 })).toBe(-32040);

    await appendFile(file, onDriftLine);
    await until(() => gateway.events('pin.reloaded')[0], 'the whole file');
    expect(gateway.running.gateway.routes.get('demo')?.guard.config.onDrift).toBe('block-server');
    expect((await client.listTools()).tools.find((tool) => tool.name === 'echo')?.description).toBe(APPROVED);
    expect(await callOutcome(client, 'add', { a: 1, b: 2 })).toBe('ok');
    expect(await callOutcome(client, 'echo', { text: 'hi' })).toBe('ok');
  });
});
