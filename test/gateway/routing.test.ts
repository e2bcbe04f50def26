import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, postRaw } from '../support/rawMcp.js';

const echoed = (id: number, text: string): unknown => ({
  jsonrpc: '2.0',
  id,
  result: { content: [{ type: 'text', text }] },
});

describe('gateway routing of /<name>/mcp (served before express, or through it)', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateless-json' });
    gateway = await startGatewayHarness([pinFor('demo', upstream.url, defaultTools())]);
  });

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it.each([
    ['the endpoint', '/demo/mcp'],
    ['the endpoint with a trailing slash', '/demo/mcp/'],
    ['the endpoint with a query string', '/demo/mcp?trace=1'],
    ['an odd spelling express matches case-insensitively', '/demo/MCP'],
  ])('answers a call at %s', async (_what, path) => {
    const reply = await postRaw(`${gateway.url}${path}`, callRequest(1, 'echo', { text: path }));
    expect(reply.status).toBe(200);
    expect(reply.messages).toEqual([echoed(1, path)]);
  });

  it('answers 404 for a server that is not routed, without reaching any upstream', async () => {
    const before = upstream.requests.length;
    const reply = await postRaw(`${gateway.url}/other/mcp`, callRequest(2, 'echo', { text: 'x' }));
    expect(reply.status).toBe(404);
    expect(upstream.requests.length).toBe(before);
  });

  it('serves the endpoint when the whole gateway app is mounted under a prefix of another express app', async () => {
    const parent = express();
    parent.use('/tools', gateway.running.gateway.app);
    const server: Server = await new Promise((resolve) => {
      const listening = parent.listen(0, '127.0.0.1', () => resolve(listening));
    });
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const reply = await postRaw(`${base}/tools/demo/mcp`, callRequest(3, 'echo', { text: 'mounted' }));
      expect(reply.status).toBe(200);
      expect(reply.messages).toEqual([echoed(3, 'mounted')]);
      expect((await postRaw(`${base}/tools/nothing/mcp`, callRequest(4, 'echo'))).status).toBe(404);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('a gateway with an empty servers folder', () => {
  it('starts, says so at warn level, and answers every route 404', async () => {
    const gateway = await startGatewayHarness([]);
    try {
      expect(gateway.events('gateway.no_servers')).toEqual([
        expect.objectContaining({ level: 40, servers: expect.stringContaining('servers') as unknown }),
      ]);
      const response = await fetch(`${gateway.url}/demo/mcp`, { method: 'POST' });
      expect(response.status).toBe(404);
    } finally {
      await gateway.close();
    }
  });
});
