import { gzipSync } from 'node:zlib';
import { defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, parseReplyBody, postRaw } from '../support/rawMcp.js';

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
