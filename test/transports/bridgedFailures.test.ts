// Bridged (stdio) upstreams that fail the gateway's fronts: one that cannot be started, one that
// stays silent on a call. One file, so the gateway and the SDKs load once.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GatewayHarness, startGatewayHarness } from '../support/gatewayHarness.js';
import {
  callRequest,
  initializeRequest,
  openRawSession,
  postRaw,
  statelessEnvelope,
} from '../support/rawMcp.js';
import { catalogAtStart, fixtureCommand, rawFixtureCommand, RAW_ECHO, stdioPinFor } from './support.js';

// Every bridged front answers an upstream it could not start the same way (front/bridgeRefusals.ts):
// 502, one -32041 with data.reason 'unreachable' and the server, under the id of the request that
// needed it. Before, each front wrote its own body (two of the three without `data`).

const ENVELOPE = statelessEnvelope();

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

// Issue 11, "proxied requests have configurable upstream timeouts": a stdio child that never
// answers a tools/call held the client's request (and with it the child) for as long as the
// client waited. Bridged requests follow the HTTP proxy's rule: an answer still owed on which the
// upstream stays silent for limits.streamIdleMs gets -32041 `timeout`.

const TIMEOUT = { code: -32041, data: { reason: 'timeout', server: 'raw' } };

describe('bridged requests: an upstream silent on a tools/call', () => {
  let gateway: GatewayHarness;
  let url: string;
  let dir: string;
  let messageLog: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-silent-'));
    messageLog = join(dir, 'messages.log');
    // Beside the hung raw server, the drifting fixture: its `slow` is silent without a progress
    // token, and its message log shows what the gateway told it.
    const drifting = stdioPinFor('drifting', fixtureCommand(), await catalogAtStart(fixtureCommand()), {
      TOOLPIN_FIXTURE_MESSAGE_LOG: messageLog,
    });
    gateway = await startGatewayHarness(
      [stdioPinFor('raw', rawFixtureCommand(), [RAW_ECHO], { TOOLPIN_RAW_HANG_CALLS: '1' }), drifting],
      { limits: { streamIdleMs: 1000 } },
    );
    url = `${gateway.url}/raw/mcp`;
  });

  afterAll(async () => {
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers a session client -32041 timeout and logs upstream.timeout', async () => {
    const session = await openRawSession(url);
    // Counted from here, and the bound 1 s (not less): on a loaded machine a child's start outlasted
    // a 300 ms bound, and its initialize was answered with a timeout of its own.
    const before = gateway.events('upstream.timeout').length;
    const reply = await postRaw(url, callRequest('hung-1', 'echo', { text: 'x' }), session);
    expect(reply.messages).toEqual([
      { jsonrpc: '2.0', id: 'hung-1', error: expect.objectContaining(TIMEOUT) as unknown },
    ]);
    expect(gateway.events('upstream.timeout').slice(before)).toEqual([
      expect.objectContaining({ server: 'raw', requests: 1 }),
    ]);
  });

  it('answers a 2026-07-28 client (shared upstream) -32041 timeout', async () => {
    const before = gateway.events('upstream.timeout').length;
    const reply = await postRaw(
      url,
      {
        jsonrpc: '2.0',
        id: 'hung-2',
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x' }, _meta: ENVELOPE },
      },
      {
        authorization: 'Bearer modern',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'echo',
      },
    );
    expect(reply.status).toBe(200);
    expect(reply.messages).toEqual([
      expect.objectContaining({ id: 'hung-2', error: expect.objectContaining(TIMEOUT) as unknown }),
    ]);
    // One line for this front's timeout (the shared upstream's, not the session client's above).
    expect(gateway.events('upstream.timeout').slice(before)).toEqual([
      expect.objectContaining({ server: 'raw', requests: 1 }),
    ]);
  });

  it('tells the upstream it may stop the call it timed out: notifications/cancelled, ahead of the next request', async () => {
    const drifting = `${gateway.url}/drifting/mcp`;
    const session = await openRawSession(drifting);
    // 2000 steps of 5 ms without a progress token: silent for far longer than streamIdleMs.
    const reply = await postRaw(drifting, callRequest('silent-1', 'slow', { steps: 2000 }), session);
    expect(reply.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 'silent-1',
        error: expect.objectContaining({
          code: -32041,
          data: { reason: 'timeout', server: 'drifting' },
        }) as unknown,
      },
    ]);
    // The next call follows the cancellation on the child's stdin: once it is answered, the child has read both.
    const next = await postRaw(drifting, callRequest('next', 'add', { a: 1, b: 2 }), session);
    expect(next.messages).toEqual([
      { jsonrpc: '2.0', id: 'next', result: { content: [{ type: 'text', text: '3' }] } },
    ]);
    const received = (await readFile(messageLog, 'utf8')).split('\n');
    const cancelled = received.indexOf('notifications/cancelled');
    expect(cancelled).toBeGreaterThan(received.indexOf('tools/call'));
    expect(cancelled).toBeLessThan(received.lastIndexOf('tools/call'));
  });
});
