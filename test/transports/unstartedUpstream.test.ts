import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { initializeRequest, postRaw } from '../support/rawMcp.js';
import { stdioPinFor } from './support.js';

// Every bridged front answers an upstream it could not start the same way (front/bridgeRefusals.ts):
// 502, one -32041 with data.reason 'unreachable' and the server, under the id of the request that
// needed it. Before, each front wrote its own body (two of the three without `data`).

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

function expectUnstarted(status: number, body: unknown, id: string | number | null): void {
  expect(status).toBe(502);
  expect(body).toEqual({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32041,
      message: 'toolpin: the upstream could not be started',
      data: { reason: 'unreachable', server: 'gone' },
    },
  });
}

describe('bridged fronts: an upstream that cannot be started', () => {
  let gateway: GatewayHarness;

  beforeAll(async () => {
    gateway = await startGatewayHarness([stdioPinFor('gone', ['/nonexistent/toolpin-no-such-server'], [])]);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('answers a session initialize with 502 and one -32041 under its id', async () => {
    const reply = await postRaw(`${gateway.url}/gone/mcp`, initializeRequest('init-gone'));
    expectUnstarted(reply.status, reply.messages[0], 'init-gone');
  });

  it('answers a 2026-07-28 request with 502 and one -32041 under its id', async () => {
    const reply = await postRaw(
      `${gateway.url}/gone/mcp`,
      { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: ENVELOPE } },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    );
    expectUnstarted(reply.status, reply.messages[0], 7);
  });

  it('answers a legacy HTTP+SSE stream request with 502 and one -32041, id null', async () => {
    const response = await fetch(`${gateway.url}/gone/sse`, { headers: { accept: 'text/event-stream' } });
    expectUnstarted(response.status, await response.json(), null);
  });
});
