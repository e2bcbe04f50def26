import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { connectV1Client, defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { freePort } from '../peers/freePort.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, openRawSession, postRaw } from '../support/rawMcp.js';
import {
  answerHandshake,
  answerJson,
  messageOf,
  startRawUpstream,
  type RawUpstream,
} from '../support/rawUpstream.js';

const FRAGILE_TOOLS: Tool[] = ['crash', 'cut', 'fine'].map((name) => ({
  name,
  description: `The ${name} tool.`,
  inputSchema: { type: 'object' },
}));

describe('gateway when an upstream dies', () => {
  let fragile: RawUpstream;
  let steady: PeerHandle;
  let gateway: GatewayHarness;

  beforeAll(async () => {
    fragile = await startRawUpstream((exchange) => {
      if (answerHandshake(exchange)) return;
      const message = messageOf(exchange.body);
      const name = Array.isArray(exchange.body) ? 'crash' : message.params?.name;
      if (message.method === 'tools/list') {
        answerJson(exchange.res, {
          jsonrpc: '2.0',
          id: message.id ?? null,
          result: { tools: FRAGILE_TOOLS },
        });
      } else if (name === 'crash') {
        exchange.req.socket.destroy();
      } else if (name === 'cut') {
        exchange.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const progressToken =
          (message.params?._meta as { progressToken?: unknown } | undefined)?.progressToken ?? 0;
        exchange.res.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: 1, total: 2 } })}\n\n`,
        );
        // Let the event reach the gateway before the connection dies.
        setTimeout(() => exchange.req.socket.destroy(), 20);
      } else {
        answerJson(exchange.res, {
          jsonrpc: '2.0',
          id: message.id ?? null,
          result: { content: [{ type: 'text', text: 'fine' }] },
        });
      }
    });
    steady = await startV1Server({ mode: 'stateless-json' });
    const deadPort = await freePort();
    gateway = await startGatewayHarness([
      pinFor('fragile', fragile.url, FRAGILE_TOOLS),
      pinFor('steady', steady.url, defaultTools()),
      pinFor('gone', `http://127.0.0.1:${deadPort}/mcp`, defaultTools()),
    ]);
  });

  afterAll(async () => {
    await gateway.close();
    await steady.close();
    await fragile.close();
  });

  it('answers 502 with a JSON-RPC error for the request when the upstream closes the socket', async () => {
    const endpoint = `${gateway.url}/fragile/mcp`;
    const session = await openRawSession(endpoint);
    const reply = await postRaw(endpoint, callRequest(1, 'crash'), session);
    expect(reply.status).toBe(502);
    expect(reply.headers.get('content-type')).toContain('application/json');
    expect(reply.messages).toEqual([
      { jsonrpc: '2.0', id: 1, error: expect.objectContaining({ code: -32041 }) },
    ]);
  });

  it('answers every request id of a batch when the upstream closes the socket', async () => {
    const endpoint = `${gateway.url}/fragile/mcp`;
    const session = await openRawSession(endpoint);
    const reply = await postRaw(endpoint, [callRequest('a', 'crash'), callRequest('b', 'fine')], session);
    expect(reply.status).toBe(502);
    const errors = reply.messages[0] as { id: unknown; error: { code: number } }[];
    expect(errors.map((error) => [error.id, error.error.code])).toEqual([
      ['a', -32041],
      ['b', -32041],
    ]);
  });

  it('answers 502 when the upstream is not listening at all', async () => {
    const reply = await postRaw(`${gateway.url}/gone/mcp`, { jsonrpc: '2.0', id: 'x', method: 'tools/list' });
    expect(reply.status).toBe(502);
    expect(reply.messages).toEqual([
      { jsonrpc: '2.0', id: 'x', error: expect.objectContaining({ code: -32041 }) },
    ]);
  });

  it('ends a stream cut mid-way with an error for the pending request', async () => {
    const client: Client = await connectV1Client(`${gateway.url}/fragile/mcp`);
    try {
      const progress: number[] = [];
      const error = await client
        .callTool({ name: 'cut', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(progress).toEqual([1]);
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32041);
      expect(gateway.events('upstream.stream_broken').length).toBeGreaterThanOrEqual(1);
      // The same session keeps working on the same upstream.
      const fine = await client.callTool({ name: 'fine', arguments: {} });
      expect(fine.content).toEqual([{ type: 'text', text: 'fine' }]);
    } finally {
      await client.close();
    }
  });

  it('keeps serving the other servers and sessions', async () => {
    const client = await connectV1Client(`${gateway.url}/steady/mcp`);
    try {
      const result = await client.callTool({ name: 'add', arguments: { a: 3, b: 4 } });
      expect(result.content).toEqual([{ type: 'text', text: '7' }]);
    } finally {
      await client.close();
    }
    const session = await openRawSession(`${gateway.url}/fragile/mcp`);
    const fine = await postRaw(`${gateway.url}/fragile/mcp`, callRequest(3, 'fine'), session);
    expect(fine.messages).toEqual([
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'fine' }] } },
    ]);
  });
});
