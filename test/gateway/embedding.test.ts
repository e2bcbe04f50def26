import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { createGateway, createLogger, listen, parseServerConfig, pinGuard } from '@toolpin/gateway';
import { connectV1Client, defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { pinFor } from '../support/pinFor.js';

const silent = createLogger({ level: 'silent' });

describe('embedding toolpin in an existing express app', () => {
  let upstream: PeerHandle;
  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateful-sse' });
  });
  afterAll(async () => {
    await upstream.close();
  });

  it('pinGuard enforces a pin under any mount path, beside the app’s own routes', async () => {
    const app = express();
    app.get('/health', (_req, res) => {
      res.json({ ok: true });
    });
    const tools = defaultTools().filter((tool) => tool.name !== 'add');
    app.use(
      '/agent-tools/mcp',
      pinGuard({
        pin: pinFor('embedded', 'http://127.0.0.1:1/unused', tools),
        upstream: upstream.url,
        logger: silent,
      }),
    );
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true });
      const client = await connectV1Client(`${base}/agent-tools/mcp`);
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual(tools.map((tool) => tool.name).sort());
      const before = upstream.callCount('add');
      const refused = await client
        .callTool({ name: 'add', arguments: { a: 1, b: 2 } })
        .catch((error: unknown) => error);
      expect((refused as McpError).data).toMatchObject({ reason: 'tool_not_pinned', tool: 'add' });
      expect(upstream.callCount('add')).toBe(before);
      await client.close();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('createGateway builds the multi-server app from a config object', async () => {
    const server = parseServerConfig(pinFor('one', upstream.url, defaultTools()), 'inline');
    const gateway = createGateway(
      {
        file: 'inline',
        listen: { host: '127.0.0.1', port: 0 },
        admin: { host: '127.0.0.1', port: 0 },
        serversDir: '.',
        limits: { maxBodyBytes: 1 << 20, upstreamTimeoutMs: 5000 },
        sessions: { max: 100, ttlSeconds: 60 },
        log: { level: 'silent' },
        servers: [server],
      } as unknown as Parameters<typeof createGateway>[0],
      { logger: silent },
    );
    const { server: http, url } = await listen(gateway.app, '127.0.0.1', 0);
    try {
      const client = await connectV1Client(`${url}/one/mcp`);
      const result = await client.callTool({ name: 'echo', arguments: { text: 'through createGateway' } });
      expect(result.content).toEqual([{ type: 'text', text: 'through createGateway' }]);
      await client.close();
      const missing = await fetch(`${url}/two/mcp`, { method: 'POST' });
      expect(missing.status).toBe(404);
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});
