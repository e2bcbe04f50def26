// A local script pinned by its bytes: `toolpin pin --command "node server.mjs"` records the entry
// file's SHA-256; when the bytes change and the catalog does not, wrap (and a bridged route of the
// gateway) refuses to start it (artifact_drifted), check says so, approve records the new bytes.
import { createHash } from 'node:crypto';
import { appendFile, copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { digestCatalog } from '@toolpin/digest';
import { parse } from 'yaml';
import { runToolpin } from '../support/runToolpin.js';
import { runWrapInProcess, startWrapInProcess } from '../transports/support.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));

describe('the artifact of a local script', () => {
  let dir: string;
  let server: string;
  let pinFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-artifact-'));
    server = join(dir, 'server.mjs');
    await copyFile(join(fixtures, 'rawStdioServer.mjs'), server);
    await copyFile(join(fixtures, 'stdioLines.mjs'), join(dir, 'stdioLines.mjs'));
    pinFile = join(dir, 'script.yaml');
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const pinned = async (): Promise<Record<string, unknown>> =>
    ((parse(await readFile(pinFile, 'utf8')) as { pin: Record<string, unknown> }).pin.artifact ??
      {}) as Record<string, unknown>;

  it("pin records the SHA-256 of node's entry file, outside the catalog digest", async () => {
    const run = await runToolpin([
      'pin',
      '--name',
      'script',
      '--command',
      `node ${server}`,
      '--out',
      pinFile,
    ]);
    expect(run.code).toBe(0);
    const bytes = await readFile(server);
    expect(await pinned()).toEqual({
      kind: 'file',
      path: server,
      sha256: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
    });
    expect(run.stderr).toContain(`artifact: file ${server}`);
    // The published catalog digest is the fold of the served tools alone, as the spec computes it.
    const document = parse(await readFile(pinFile, 'utf8')) as {
      pin: { catalog: string };
      definitions: object;
    };
    expect(document.pin.catalog).toBe(digestCatalog(Object.values(document.definitions)).catalog);
  });

  it('wrap starts the pinned bytes', async () => {
    const wrap = await startWrapInProcess(pinFile, undefined);
    expect((await wrap.client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    expect(wrap.events('upstream.artifact_verified')).toHaveLength(1);
    expect(await wrap.close()).toBe(0);
  });

  describe('after the bytes changed, the catalog the same', () => {
    beforeAll(async () => {
      await appendFile(server, '\n// a new release: the same tools, other code\n');
    });

    it('wrap refuses to start it: artifact_drifted, old -> new', async () => {
      const wrap = runWrapInProcess(pinFile, undefined);
      const code = await wrap.end();
      expect(code).toBe(2);
      const [drifted] = wrap.events('upstream.artifact_drifted');
      expect(drifted).toMatchObject({ action: 'refused', reason: 'artifact_drifted', server: 'script' });
      expect((drifted?.pinned as { sha256: string }).sha256).toBe((await pinned()).sha256);
      expect((drifted?.observed as { sha256: string }).sha256).not.toBe((await pinned()).sha256);
      const [failed] = wrap.events('wrap.failed');
      expect(String(failed?.err)).toMatch(/^GW_ARTIFACT_DRIFTED: artifact_drifted: file .* -> file /);
    });

    it('a command given to wrap after -- is held to the pinned artifact too', async () => {
      const wrap = runWrapInProcess(pinFile, [process.execPath, server]);
      expect(await wrap.end()).toBe(2);
      expect(wrap.events('upstream.artifact_drifted')).toHaveLength(1);
    });

    it('check reports the artifact drift while the catalog is equal (exit 1)', async () => {
      const run = await runToolpin(['check', pinFile, '--json']);
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(report).toMatchObject({ status: 'drift', equal: true, severity: 'high' });
      expect(report.artifact).toMatchObject({ equal: false });
    });

    describe('a bridged stdio route of the gateway', () => {
      let gateway: GatewayHarness;

      beforeAll(async () => {
        gateway = await startGatewayHarness([
          parse(await readFile(pinFile, 'utf8')) as Record<string, unknown>,
        ]);
      }, 20_000);

      afterAll(async () => {
        await gateway?.close();
      });

      it('refuses the session: the child is never started', async () => {
        const client = new Client({ name: 'artifact-test', version: '1.0.0' });
        await expect(
          client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/script/mcp`))),
        ).rejects.toThrow();
        const [drifted] = gateway.events('upstream.artifact_drifted');
        expect(drifted).toMatchObject({ action: 'refused', server: 'script' });
      });
    });

    it('approve records the new bytes; wrap then starts them', async () => {
      const before = await pinned();
      const run = await runToolpin(['approve', pinFile, '--yes']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/artifact_drifted file .* -> file .* \[high\]/);
      const after = await pinned();
      expect(after.sha256).not.toBe(before.sha256);
      const wrap = await startWrapInProcess(pinFile, undefined);
      expect((await wrap.client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
      expect(await wrap.close()).toBe(0);
    });
  });
});
