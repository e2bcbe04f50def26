// The gateway's HTTP handling of /<name>/mcp requests, each describe with its own upstream and
// gateway: reading bodies (encodings, sizes), refusing what it cannot accept (limits), and routing
// (served before express, or through it). One file so the gateway and the SDKs load once.
import { gzipSync } from 'node:zlib';
import { defaultTools, type PeerHandle, startV1Server } from '../peers/index.js';
import { type GatewayHarness, startGatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, parseReplyBody, postRaw } from '../support/rawMcp.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

describe('gateway reading request bodies', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let endpoint: string;

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateless-json' });
    gateway = await startGatewayHarness([pinFor('demo', upstream.url, defaultTools())]);
    endpoint = `${gateway.url}/demo/mcp`;
  });

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('forwards a body that arrived in many small chunks whole', async () => {
    const text = 'chunked '.repeat(200);
    const bytes = new TextEncoder().encode(JSON.stringify(callRequest(1, 'echo', { text })));
    let offset = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Bounded: the body is cut in 64-byte pieces, then the stream ends.
        if (offset >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(offset, offset + 64));
        offset += 64;
      },
    });
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body,
      duplex: 'half',
    } as RequestInit);
    const messages = parseReplyBody(response.headers.get('content-type') ?? '', await response.text());
    expect(response.status).toBe(200);
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text }] } }]);
  });

  it('inflates a gzip-compressed body and forwards it as plain JSON', async () => {
    const compressed = gzipSync(JSON.stringify(callRequest(2, 'echo', { text: 'from a compressed body' })));
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        accept: 'application/json, text/event-stream',
      },
      body: compressed,
    });
    const messages = parseReplyBody(response.headers.get('content-type') ?? '', await response.text());
    expect(response.status).toBe(200);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'from a compressed body' }] } },
    ]);
    expect(upstream.callCount('echo')).toBe(2);
  });

  it('routes only the endpoint itself: a path below it is not found and never reaches the upstream', async () => {
    const before = upstream.requests.length;
    const reply = await postRaw(`${endpoint}/extra`, callRequest(3, 'echo', { text: 'x' }));
    expect(reply.status).toBe(404);
    expect(upstream.requests.length).toBe(before);
  });
});

const MAX_BODY_BYTES = 2048;

describe('gateway refusing requests it cannot accept', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let endpoint: string;

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateless-json' });
    gateway = await startGatewayHarness([pinFor('demo', upstream.url, defaultTools())], {
      limits: { maxBodyBytes: MAX_BODY_BYTES },
    });
    endpoint = `${gateway.url}/demo/mcp`;
  });

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  afterEach(() => {
    expect(upstream.requests).toEqual([]);
  });

  it('answers 413 with a JSON body when the body exceeds limits.maxBodyBytes', async () => {
    const reply = await postRaw(endpoint, callRequest(1, 'echo', { text: 'x'.repeat(MAX_BODY_BYTES) }));
    expect(reply.status).toBe(413);
    expect(reply.headers.get('content-type')).toContain('application/json');
    expect(reply.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: expect.objectContaining({
          code: -32600,
          message: expect.stringContaining(String(MAX_BODY_BYTES)),
        }),
      },
    ]);
  });

  it('answers 413 in JSON even to a client that accepts only SSE', async () => {
    const reply = await postRaw(endpoint, callRequest(1, 'echo', { text: 'x'.repeat(MAX_BODY_BYTES) }), {
      accept: 'text/event-stream',
    });
    expect(reply.status).toBe(413);
    expect(reply.headers.get('content-type')).toContain('application/json');
  });

  it('answers 413 to a chunked body that grows past the limit (no Content-Length to trust)', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(512));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Bounded: a little past the limit, then the stream ends.
        if (sent > MAX_BODY_BYTES * 2) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: -32600 } });
  });

  it('answers 400 with -32700 to malformed JSON', async () => {
    const reply = await postRaw(endpoint, '{"jsonrpc":"2.0","id":1,"method":');
    expect(reply.status).toBe(400);
    expect(reply.messages).toEqual([
      { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32700 }) },
    ]);
  });

  it.each([
    ['a bare number', '42'],
    ['an object without jsonrpc', '{"id":1,"method":"tools/list"}'],
    ['a wrong version', '{"jsonrpc":"1.0","id":1,"method":"tools/list"}'],
    ['an empty batch', '[]'],
    ['an object id', '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}'],
  ])('answers 400 with -32600 to %s', async (_label, body) => {
    const reply = await postRaw(endpoint, body);
    expect(reply.status).toBe(400);
    expect(reply.messages).toEqual([
      { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600 }) },
    ]);
  });

  it.each([
    ['an unknown server', '/nope/mcp'],
    ['an unknown path', '/demo/other'],
    ['the root', '/'],
  ])('answers 404 with a JSON body on %s', async (_label, path) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toMatchObject({ error: 'not_found', servers: ['/demo/mcp'] });
  });
});

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
