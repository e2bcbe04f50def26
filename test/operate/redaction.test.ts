import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectV1Client, defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { freePort } from '../peers/freePort.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { runToolpin } from '../support/runToolpin.js';

const PASSWORD = 's3cretPassw0rd';
const API_KEY = 'K3yV4lue0123';

/** The upstream URL with a userinfo password and an `api_key` query, as an operator might write it. */
function withCredentials(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//user:${PASSWORD}@${parsed.host}${parsed.pathname}?api_key=${API_KEY}&x=1`;
}

function expectNoSecret(text: string): void {
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toContain(API_KEY);
}

describe('credentials in upstream URLs', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let client: Client | undefined;
  let downUrl: string;

  beforeEach(async () => {
    upstream = await startV1Server({ mode: 'stateful-sse' });
    // Nothing listens there: every contact fails.
    downUrl = withCredentials(`http://127.0.0.1:${await freePort()}/mcp`);
    gateway = await startGatewayHarness([
      pinFor('demo', withCredentials(upstream.url), defaultTools()),
      pinFor('down', downUrl, defaultTools()),
    ]);
  });

  afterEach(async () => {
    await client?.close();
    client = undefined;
    await gateway.close();
    await upstream.close();
  });

  it('never appear in a log line, an error, /status or /readyz', async () => {
    client = await connectV1Client(`${gateway.url}/demo/mcp`);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
    const failure = await connectV1Client(`${gateway.url}/down/mcp`).then(
      async (down) => {
        await down.close();
        return 'connected';
      },
      (error: unknown) => String(error),
    );
    expect(failure).toMatch(/unreachable|502/);
    expectNoSecret(failure);
    expect(gateway.events('upstream.unreachable').length).toBeGreaterThan(0);

    const status = await (await fetch(`${gateway.running.adminUrl}/status`)).text();
    const readiness = await (await fetch(`${gateway.running.adminUrl}/readyz`)).text();
    for (const text of [JSON.stringify(gateway.logs), status, readiness]) expectNoSecret(text);
    const shown = `http://[redacted]@${new URL(upstream.url).host}/mcp?api_key=[redacted]&x=1`;
    expect(gateway.events('gateway.started')[0]?.servers).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'demo', upstream: shown })]),
    );
    expect(JSON.parse(status)).toMatchObject({
      servers: expect.arrayContaining([expect.objectContaining({ name: 'demo', upstream: shown })]),
    });
  });

  it('never appear in the output of toolpin check when the upstream is unreachable', async () => {
    const file = join(gateway.dir, 'down-check.json');
    await writeFile(file, JSON.stringify(pinFor('down', downUrl, defaultTools())));
    for (const args of [
      ['check', file],
      ['check', file, '--json'],
    ]) {
      const run = await runToolpin(args);
      expect(run.code).toBe(2);
      expectNoSecret(run.stdout + run.stderr);
      expect(run.stderr).toContain('cannot connect to http://[redacted]@127.0.0.1:');
    }
  });
});
