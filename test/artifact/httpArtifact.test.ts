// The artifact of an HTTP upstream is what it states of itself: `toolpin pin` records the
// serverInfo name and version (server/discover's in 2026-07-28) as `pin.artifact {kind: server}`;
// the checkpoint judges every initialize and server/discover answer against it on every front:
// another version is `artifact_drifted` old -> new, low, served and reported by default, refused
// where the pin's drift policy blocks low drift; check, diff and approve show and record it. Real
// SDK servers (v1 Streamable HTTP, v2 2026-07-28, v1 over legacy HTTP+SSE) whose version changes
// between pin and run, their catalogs the same.
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestCatalog } from '@toolpin/digest';
import { parse, stringify } from 'yaml';
import {
  connectSseClient,
  connectV1Client,
  connectV2Client,
  startLegacySseServer,
  startV1Server,
  startV2Server,
  type PeerHandle,
} from '../peers/index.js';
import { runToolpin } from '../support/runToolpin.js';
import { until } from '../support/until.js';
import { startGatewayHarness, type GatewayHarness, type LogLine } from '../support/gatewayHarness.js';
import { runWrapInProcess, startWrapInProcess } from '../transports/support.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const stated = { name: 'stated-peer', version: '1.0.0' };
const serverInfo = (): { name: string; version: string } => ({ ...stated });
const OLD = 'server "stated-peer" version "1.0.0"';
const NEW = 'server "stated-peer" version "1.1.0"';
// Low drift blocked in enforce mode: the drift policy that refuses a stated identity.
const BLOCK_LOW = { high: 'filter', low: 'block-server' };

describe('the artifact of an HTTP upstream: the serverInfo it states', () => {
  let dir: string;
  const peers: Record<'v1' | 'v2' | 'sse', PeerHandle | undefined> = {
    v1: undefined,
    v2: undefined,
    sse: undefined,
  };
  const file = (name: string): string => join(dir, `${name}.yaml`);
  const document = async (
    name: string,
  ): Promise<Record<string, unknown> & { pin: Record<string, unknown> }> =>
    parse(await readFile(file(name), 'utf8')) as Record<string, unknown> & { pin: Record<string, unknown> };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-http-artifact-'));
    peers.v1 = await startV1Server({ mode: 'stateful-sse', serverInfo });
    peers.v2 = await startV2Server({ serverInfo });
    peers.sse = await startLegacySseServer({ serverInfo });
  });

  afterAll(async () => {
    await Promise.all(Object.values(peers).map((peer) => peer?.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it('pin records the name and version each states (2026-07-28: server/discover), outside the catalog digest', async () => {
    for (const name of ['v1', 'v2', 'sse'] as const) {
      const run = await runToolpin([
        'pin',
        '--name',
        name,
        '--url',
        String(peers[name]?.url),
        '--out',
        file(name),
      ]);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(`artifact: ${OLD} (as the server states it)`);
      const pinned = await document(name);
      expect(pinned.pin.artifact).toEqual({ kind: 'server', name: 'stated-peer', version: '1.0.0' });
      // The published catalog digest is the fold of the definitions alone, whatever the artifact.
      expect(pinned.pin.catalog).toBe(digestCatalog(Object.values(pinned.definitions as object)).catalog);
    }
    expect(((await document('sse')).upstream as { transport: string }).transport).toBe('sse');
  });

  describe('after the servers state version 1.1.0, their catalogs the same', () => {
    let gateway: GatewayHarness;
    const drifted = (server: string): LogLine[] =>
      gateway.events('upstream.artifact_drifted').filter((line) => line.server === server);

    beforeAll(async () => {
      stated.version = '1.1.0';
      const pins: Record<string, unknown>[] = [];
      for (const name of ['v1', 'v2', 'sse']) {
        const pinned = await document(name);
        pins.push(pinned, { ...pinned, name: `${name}-block`, onDrift: BLOCK_LOW });
      }
      // The aggregate's members are upstreams the gateway initializes itself, one flagged, one refused.
      gateway = await startGatewayHarness(pins, { aggregate: { servers: ['v1', 'sse-block'] } });
    }, 20_000);

    afterAll(async () => {
      await gateway?.close();
    });

    it('the HTTP route (2025 initialize): served as stated, reported as low drift old -> new', async () => {
      const client = await connectV1Client(`${gateway.url}/v1/mcp`);
      expect(client.getServerVersion()).toMatchObject({ name: 'stated-peer', version: '1.1.0' });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'add', 'slow']);
      await client.close();
      const [line] = drifted('v1');
      expect(line).toMatchObject({
        level: 40,
        action: 'flagged',
        reason: 'artifact_drifted',
        severity: 'low',
        via: 'initialize',
        pinned: { kind: 'server', version: '1.0.0' },
        observed: { kind: 'server', version: '1.1.0' },
        summary: `${OLD} -> ${NEW}`,
      });
    });

    it('the HTTP route (2026-07-28): the server/discover answer is judged the same', async () => {
      const client = await connectV2Client(`${gateway.url}/v2/mcp`, { negotiation: { pin: '2026-07-28' } });
      expect((await client.listTools()).tools).toHaveLength(3);
      await client.close();
      expect(drifted('v2')[0]).toMatchObject({
        action: 'flagged',
        via: 'server/discover',
        summary: `${OLD} -> ${NEW}`,
      });
    });

    it('where the drift policy blocks low drift (enforce), the initialize answer is refused', async () => {
      const error = await connectV1Client(`${gateway.url}/v1-block/mcp`).then(
        () => undefined,
        (caught: unknown) => caught as { code?: number; message: string },
      );
      expect(error?.code).toBe(-32040);
      expect(error?.message).toContain(`artifact_drifted: ${OLD} -> ${NEW}`);
      expect(drifted('v1-block')[0]).toMatchObject({ level: 50, action: 'refused', via: 'initialize' });
    });

    it('and so is the server/discover answer (2026-07-28)', async () => {
      await expect(
        connectV2Client(`${gateway.url}/v2-block/mcp`, { negotiation: { pin: '2026-07-28' } }),
      ).rejects.toThrow();
      expect(drifted('v2-block')[0]).toMatchObject({ action: 'refused', via: 'server/discover' });
    });

    it('a bridged legacy HTTP+SSE upstream: the initialize answer the bridge carries is judged', async () => {
      const client = await connectV1Client(`${gateway.url}/sse/mcp`);
      expect((await client.listTools()).tools).toHaveLength(3);
      await client.close();
      expect(drifted('sse')[0]).toMatchObject({
        action: 'flagged',
        via: 'initialize',
        summary: `${OLD} -> ${NEW}`,
      });
      await expect(connectV1Client(`${gateway.url}/sse-block/mcp`)).rejects.toThrow(/artifact_drifted/);
    });

    it('the legacy HTTP+SSE front of a Streamable HTTP route: its initialize answer is judged too', async () => {
      const flagged = drifted('v1').length;
      const client = await connectSseClient(`${gateway.url}/v1/sse`);
      expect((await client.listTools()).tools).toHaveLength(3);
      await client.close();
      expect(drifted('v1').slice(flagged)).toEqual([
        expect.objectContaining({ action: 'flagged', via: 'initialize' }),
      ]);
      await expect(connectSseClient(`${gateway.url}/v1-block/sse`)).rejects.toThrow(/artifact_drifted/);
    });

    it("a 2026-07-28 client of the bridged route: the gateway's own initialize of the upstream is judged", async () => {
      const before = drifted('sse').length;
      const client = await connectV2Client(`${gateway.url}/sse/mcp`, { negotiation: { pin: '2026-07-28' } });
      expect((await client.listTools()).tools).toHaveLength(3);
      await client.close();
      expect(drifted('sse').length).toBe(before + 1);
      // Refused: the shared upstream is closed, never served.
      await expect(
        connectV2Client(`${gateway.url}/sse-block/mcp`, { negotiation: { pin: '2026-07-28' } }),
      ).rejects.toThrow();
      const refused = drifted('sse-block').filter((line) => line.action === 'refused');
      expect(refused.length).toBeGreaterThanOrEqual(2);
      expect(gateway.events('upstream.start_failed').some((line) => line.server === 'sse-block')).toBe(true);
    });

    it('the aggregate route: each member the gateway initializes is judged; a refused one is left out', async () => {
      const flagged = drifted('v1').length;
      const refused = drifted('sse-block').length;
      const client = await connectV1Client(`${gateway.url}/mcp`);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        'v1__echo',
        'v1__add',
        'v1__slow',
      ]);
      await client.close();
      expect(drifted('v1').slice(flagged)).toEqual([
        expect.objectContaining({ action: 'flagged', via: 'initialize' }),
      ]);
      expect(drifted('sse-block').slice(refused)).toEqual([expect.objectContaining({ action: 'refused' })]);
    });

    it('a reloaded pin is in force on an upstream the gateway opened itself, from the next request', async () => {
      const client = await connectV2Client(`${gateway.url}/sse/mcp`, { negotiation: { pin: '2026-07-28' } });
      expect((await client.listTools()).tools).toHaveLength(3);
      const file = join(gateway.dir, 'servers', 'sse.json');
      const reloads = gateway.events('pin.reloaded').length;
      await writeFile(
        file,
        JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), onDrift: BLOCK_LOW }),
      );
      await until(
        () => (gateway.events('pin.reloaded').length > reloads ? true : undefined),
        'the reload of the sse pin',
      );
      await expect(client.listTools()).rejects.toThrow(/artifact_drifted/);
      await client.close();
    });

    it('wrap of the HTTP pin: reported and served; refused where low drift blocks', async () => {
      const wrap = await startWrapInProcess(file('v1'), undefined);
      expect((await wrap.client.listTools()).tools).toHaveLength(3);
      expect(wrap.events('upstream.artifact_drifted')[0]).toMatchObject({
        action: 'flagged',
        severity: 'low',
      });
      expect(await wrap.close()).toBe(0);
      const blocking = join(dir, 'v1-wrap-block.yaml');
      await writeFile(blocking, stringify({ ...(await document('v1')), onDrift: BLOCK_LOW }));
      const refused = runWrapInProcess(blocking, undefined);
      const client = new Client({ name: 'toolpin-wrap-test', version: '1.0.0' });
      await expect(client.connect(new StdioServerTransport(refused.stdout, refused.stdin))).rejects.toThrow(
        /artifact_drifted/,
      );
      await client.close();
      await refused.end();
      expect(refused.events('upstream.artifact_drifted')[0]).toMatchObject({ action: 'refused' });
    });

    it('check reports the low drift of the artifact while the catalog is equal (exit 1)', async () => {
      const text = await runToolpin(['check', file('v1')]);
      expect(text.code).toBe(1);
      expect(text.stdout).toContain(`artifact_drifted  ${OLD} -> ${NEW} [low]`);
      const json = await runToolpin(['check', file('v2'), '--json']);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        status: 'drift',
        equal: true,
        severity: 'low',
        artifact: { equal: false, observed: { kind: 'server', version: '1.1.0' } },
      });
    });

    it('approve records the new version; check is then equal, and diff shows what changed', async () => {
      const before = join(dir, 'v1-before.yaml');
      await copyFile(file('v1'), before);
      const run = await runToolpin(['approve', file('v1'), '--yes']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`artifact_drifted ${OLD} -> ${NEW} [low]`);
      const approved = await document('v1');
      expect(approved.pin.artifact).toEqual({ kind: 'server', name: 'stated-peer', version: '1.1.0' });
      expect(approved.pin.catalog).toBe(
        (parse(await readFile(before, 'utf8')) as { pin: { catalog: string } }).pin.catalog,
      );
      expect((await runToolpin(['check', file('v1')])).code).toBe(0);
      const diff = await runToolpin(['diff', before, file('v1')]);
      expect(diff.code).toBe(1);
      expect(diff.stdout).toContain(`artifact_drifted  ${OLD} -> ${NEW} [low]`);
      // The approved pin: what the server states is verified.
      const wrap = await startWrapInProcess(file('v1'), undefined);
      expect(wrap.events('upstream.artifact_verified')).toHaveLength(1);
      expect(wrap.events('upstream.artifact_drifted')).toHaveLength(0);
      expect(await wrap.close()).toBe(0);
    });
  });
});
