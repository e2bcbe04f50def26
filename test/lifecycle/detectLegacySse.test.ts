import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { digestInstructions } from '@toolpin/digest';
import { parse as parseYaml } from 'yaml';
import {
  connectV1Client,
  defaultTools,
  startLegacySseServer,
  startV1Server,
  type PeerHandle,
} from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { startRawUpstream, type RawUpstream } from '../support/rawUpstream.js';
import { runToolpin } from '../support/runToolpin.js';

interface PinDocument {
  name: string;
  upstream: { url: string; transport?: string };
  pin: { catalog: string; tools: Record<string, string> };
}

// Every test runs the CLI once or more against live servers.
const SPAWNS = 60_000;

describe('toolpin pin --url detects a legacy HTTP+SSE server as the MCP spec tells clients to', () => {
  let dir: string;
  const closers: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-detect-'));
  });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await rm(dir, { recursive: true, force: true });
  }, SPAWNS);

  async function start<T extends PeerHandle | RawUpstream | GatewayHarness>(peer: Promise<T>): Promise<T> {
    const handle = await peer;
    closers.push(() => handle.close());
    return handle;
  }

  async function readPin(file: string): Promise<PinDocument> {
    return parseYaml(await readFile(file, 'utf8')) as PinDocument;
  }

  it(
    'writes transport: sse for a 2024-11-05 server after its initialize POST is answered 404, and the pin serves',
    async () => {
      const upstream = await start(startLegacySseServer());
      const out = join(dir, 'legacy.yaml');
      const run = await runToolpin(['pin', '--name', 'legacy', '--url', upstream.url, '--out', out]);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(
        `detected the legacy HTTP+SSE transport (MCP 2024-11-05) at ${upstream.url}: the Streamable HTTP initialize was answered HTTP 404; the pin records transport: sse`,
      );
      expect(run.stderr).toContain('listed 3 tools in 1 page(s)');
      const pin = await readPin(out);
      expect(pin.upstream).toEqual({ url: upstream.url, transport: 'sse' });
      const expected = pinFor('legacy', upstream.url, defaultTools());
      expect(pin.pin).toEqual({
        ...(expected.pin as object),
        instructions: digestInstructions(undefined),
        artifact: { kind: 'server', name: 'toolpin-test-peer-v1', version: '1.0.0' },
      });
      // The spec's order: the initialize POST first, the GET for the SSE stream after it was refused.
      const posted = upstream.requests.findIndex((r) => r.httpMethod === 'POST' && r.path === '/sse');
      const opened = upstream.requests.findIndex((r) => r.httpMethod === 'GET' && r.path === '/sse');
      expect(posted).toBeGreaterThanOrEqual(0);
      expect(opened).toBeGreaterThan(posted);

      // check lists over the recorded transport: no Streamable HTTP probe reaches the server.
      const probes = upstream.requests.filter((r) => r.httpMethod === 'POST' && r.path === '/sse').length;
      expect((await runToolpin(['check', out])).code).toBe(0);
      expect(upstream.requests.filter((r) => r.httpMethod === 'POST' && r.path === '/sse')).toHaveLength(
        probes,
      );

      // The written pin is one the gateway serves: tools listed and called through it.
      const gateway = await start(startGatewayHarness([{ ...pin, mode: 'enforce' }]));
      const client: Client = await connectV1Client(`${gateway.url}/legacy/mcp`);
      closers.push(() => client.close());
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo', 'slow']);
      const result = await client.callTool({ name: 'echo', arguments: { text: 'pinned by detection' } });
      expect(result.content).toEqual([{ type: 'text', text: 'pinned by detection' }]);
      expect(upstream.callCount('echo')).toBe(1);
      expect(gateway.events('catalog.verified').length).toBeGreaterThan(0);
    },
    SPAWNS,
  );

  it(
    'writes transport: streamable-http for a Streamable HTTP server, after one handshake and no SSE stream',
    async () => {
      const upstream = await start(startV1Server({ mode: 'stateless-json' }));
      const run = await runToolpin(['pin', '--name', 'modern', '--url', upstream.url]);
      expect(run.code).toBe(0);
      expect(run.stderr).not.toContain('detected');
      const pin = parseYaml(run.stdout) as PinDocument;
      expect(pin.upstream).toEqual({ url: upstream.url, transport: 'streamable-http' });
      // The server sends no instructions: the pin pins their absence (docs/pin-surfaces.md).
      expect(pin.pin).toEqual({
        ...(pinFor('modern', upstream.url, defaultTools()).pin as object),
        instructions: digestInstructions(undefined),
        artifact: { kind: 'server', name: 'toolpin-test-peer-v1', version: '1.0.0' },
      });
      // One handshake; a GET there is the Streamable client's own stream, sent after it (naming the
      // negotiated revision), never the header-less GET that opens an HTTP+SSE stream.
      expect(upstream.requests.filter((r) => r.method === 'initialize')).toHaveLength(1);
      const gets = upstream.requests.filter((r) => r.httpMethod === 'GET');
      expect(gets.every((r) => r.headers['mcp-protocol-version'] !== undefined)).toBe(true);
    },
    SPAWNS,
  );

  it(
    'reports a 401 as an authorization problem and tries no other transport',
    async () => {
      const upstream = await start(
        startRawUpstream(({ res }) => {
          res.writeHead(401, { 'www-authenticate': 'Bearer realm="toolpin-test"' }).end('unauthorized');
        }),
      );
      const run = await runToolpin(['pin', '--name', 'locked', '--url', upstream.url]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`cannot connect to ${upstream.url}: Streamable HTTP answered 401`);
      expect(run.stderr).toContain('HTTP 401 is an authorization problem, not a transport one');
      expect(run.stderr).not.toContain('HTTP+SSE');
      // One initialize POST: neither the 2026-07-28 client nor the SSE GET followed it.
      expect(upstream.requests.map((request) => request.httpMethod)).toEqual(['POST']);
    },
    SPAWNS,
  );

  it(
    'says what each transport answered when a server refuses all of them',
    async () => {
      const upstream = await start(
        startRawUpstream(({ res }) => {
          res.writeHead(405, { allow: 'PUT' }).end('not here');
        }),
      );
      const run = await runToolpin(['pin', '--name', 'nothing', '--url', upstream.url]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /cannot connect to \S+: Streamable HTTP answered 405 \(.*\); a 2026-07-28 client answered 405 \(.*\); HTTP\+SSE answered 405 \(.*\)/,
      );
      expect(upstream.requests.some((request) => request.httpMethod === 'GET')).toBe(true);
    },
    SPAWNS,
  );

  it(
    'gives up on an SSE stream that never names its endpoint, within --timeout',
    async () => {
      const upstream = await start(
        startRawUpstream(({ req, res }) => {
          if (req.method === 'GET')
            res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
          else res.writeHead(404).end();
        }),
      );
      const run = await runToolpin(['pin', '--name', 'mute', '--url', upstream.url, '--timeout', '1000']);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        'HTTP+SSE failed: no endpoint event, or no initialize answer, within 1000 ms',
      );
    },
    SPAWNS,
  );

  it(
    'an explicit --transport wins: streamable-http never falls back, sse never probes',
    async () => {
      const upstream = await start(startLegacySseServer());
      const refused = await runToolpin([
        'pin',
        '--name',
        'legacy',
        '--url',
        upstream.url,
        '--transport',
        'streamable-http',
      ]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('Streamable HTTP answered 404');
      expect(refused.stderr).toContain('HTTP+SSE not tried (transport streamable-http was named)');
      expect(upstream.requests.filter((r) => r.httpMethod === 'GET')).toEqual([]);

      const postsToSse = (): number =>
        upstream.requests.filter((r) => r.httpMethod === 'POST' && r.path === '/sse').length;
      const probes = postsToSse();
      expect(probes).toBeGreaterThan(0);
      const named = await runToolpin([
        'pin',
        '--name',
        'legacy',
        '--url',
        upstream.url,
        '--transport',
        'sse',
      ]);
      expect(named.code).toBe(0);
      expect(named.stderr).not.toContain('detected');
      expect((parseYaml(named.stdout) as PinDocument).upstream).toEqual({
        url: upstream.url,
        transport: 'sse',
      });
      // The named transport went straight to GET /sse: no initialize was posted to the stream's URL.
      expect(postsToSse()).toBe(probes);
      expect(upstream.requests.some((r) => r.httpMethod === 'GET' && r.path === '/sse')).toBe(true);
    },
    SPAWNS,
  );
});
