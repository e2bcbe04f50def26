import { defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, postRaw } from '../support/rawMcp.js';

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
