import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { callRequest, initializeRequest, openRawSession, postRaw } from '../support/rawMcp.js';
import {
  catalogAtStart,
  countAlive,
  eventually,
  rawFixtureCommand,
  stdioPinFor,
  writtenPids,
} from './support.js';

// Finding 12 of issue 11: bare initialize requests to a stdio route each spawned a child held for
// the session TTL (an hour), until every later client got 503. Bridged sessions now have a
// per-client quota (credential, else remote address) and a short idle timeout of their own.
// The children are the raw stdio fixture (no SDK): real processes at a quarter of the CPU, since
// what is under test is the gateway's count of them, not what they serve.

const ALICE = { authorization: 'Bearer alice' };
const BOB = { authorization: 'Bearer bob' };

let pinned: Tool[];

beforeAll(async () => {
  pinned = await catalogAtStart(rawFixtureCommand());
});

function errorOf(message: unknown): { code?: number; data?: Record<string, unknown> } | undefined {
  return (message as { error?: { code?: number; data?: Record<string, unknown> } }).error;
}

describe('bridged sessions: a quota per client', () => {
  let gateway: GatewayHarness;
  let url: string;

  beforeEach(async () => {
    gateway = await startGatewayHarness([stdioPinFor('local', rawFixtureCommand(), pinned)], {
      sessions: { bridgedPerClient: 2 },
    });
    url = `${gateway.url}/local/mcp`;
  });

  afterEach(async () => {
    await gateway.close();
  });

  it('refuses a client over its quota with 429, Retry-After and -32041, while another client is served', async () => {
    const first = await openRawSession(url, ALICE);
    await openRawSession(url, ALICE);

    const refused = await postRaw(url, initializeRequest('init-3'), ALICE);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('mcp-session-id')).toBeNull();
    expect(refused.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 'init-3',
        error: expect.objectContaining({
          code: -32041,
          data: { reason: 'client_quota', server: 'local' },
        }) as unknown,
      },
    ]);
    // The legacy SSE front of the server counts against the same quota, and refuses alike.
    const legacy = await fetch(`${gateway.url}/local/sse`, { headers: ALICE });
    expect(legacy.status).toBe(429);
    expect(legacy.headers.get('retry-after')).not.toBeNull();
    expect(await legacy.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32041, data: { reason: 'client_quota' } },
    });

    // Bob is another client: served as if alice were not there.
    const bob = await openRawSession(url, BOB);
    const echoed = await postRaw(url, callRequest('call-1', 'echo', { text: 'bob' }), bob);
    expect(echoed.messages[0]).toMatchObject({ result: { content: [{ type: 'text', text: 'bob' }] } });

    // Ending a session gives its room back.
    const ended = await fetch(url, { method: 'DELETE', headers: first });
    expect(ended.status).toBe(200);
    expect(
      await eventually(async () => (await postRaw(url, initializeRequest('init-4'), ALICE)).status === 200),
    ).toBe(true);

    const refusals = gateway.events('session.refused');
    expect(refusals).toContainEqual(
      expect.objectContaining({ server: 'local', reason: 'client_quota', client: expect.any(String) }),
    );
    expect(JSON.stringify(refusals)).not.toContain('alice');
  });

  it('counts clients without a credential by their remote address', async () => {
    await openRawSession(url);
    await openRawSession(url);
    const refused = await postRaw(url, initializeRequest('anon-3'));
    expect(refused.status).toBe(429);
    expect(errorOf(refused.messages[0])).toMatchObject({ data: { reason: 'client_quota' } });
    // A credential makes another client, even from the same address.
    expect((await postRaw(url, initializeRequest('bob-1'), BOB)).status).toBe(200);
  });
});

/** The HTTP status of a bare initialize sent from `localAddress` (any 127/8 address is loopback on Linux). */
function initializeFrom(url: string, localAddress: string): Promise<number> {
  const body = JSON.stringify(initializeRequest('from-elsewhere'));
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        localAddress,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('no answer within 5 s')));
    req.end(body);
  });
}

describe('bridged sessions: a quota per remote address', () => {
  let gateway: GatewayHarness;
  let url: string;

  beforeEach(async () => {
    gateway = await startGatewayHarness([stdioPinFor('local', rawFixtureCommand(), pinned)], {
      sessions: { bridgedPerClient: 2, bridgedPerAddress: 3 },
    });
    url = `${gateway.url}/local/mcp`;
  });

  afterEach(async () => {
    await gateway.close();
  });

  it('refuses an address over its quota with 429 (address_quota), whatever Authorization it sends', async () => {
    // Credentials the gateway does not verify: each one a new client, all from 127.0.0.1.
    for (let n = 1; n <= 3; n++) await openRawSession(url, { authorization: `Bearer rotated-${n}` });
    const refused = await postRaw(url, initializeRequest('rotated-4'), { authorization: 'Bearer rotated-4' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 'rotated-4',
        error: expect.objectContaining({
          code: -32041,
          data: { reason: 'address_quota', server: 'local' },
        }) as unknown,
      },
    ]);
    // The legacy SSE front counts against the same quota.
    const legacy = await fetch(`${gateway.url}/local/sse`, {
      headers: { authorization: 'Bearer rotated-5' },
    });
    expect(legacy.status).toBe(429);
    expect(await legacy.json()).toMatchObject({ error: { code: -32041, data: { reason: 'address_quota' } } });
    // Another address is served.
    expect(await initializeFrom(url, '127.0.0.2')).toBe(200);
    expect(gateway.events('session.refused')).toContainEqual(
      expect.objectContaining({ server: 'local', reason: 'address_quota' }),
    );
  });
});

describe('bridged sessions: the idle timeout reaps children', () => {
  let dir: string;
  let gateway: GatewayHarness;
  let url: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-idle-'));
    const env = { TOOLPIN_RAW_PID_DIR: dir };
    // A one-second idle bound, far below the sessions' TTL (an hour): the two are separate.
    gateway = await startGatewayHarness([stdioPinFor('local', rawFixtureCommand(), pinned, env)], {
      sessions: { bridgedIdleSeconds: 1, ttlSeconds: 3600 },
    });
    url = `${gateway.url}/local/mcp`;
  });

  afterEach(async () => {
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function pidsOf(count: number): Promise<number[]> {
    expect(await eventually(async () => (await writtenPids(dir)).length >= count)).toBe(true);
    return writtenPids(dir);
  }

  it('stops the child of a session never used after initialize', async () => {
    await openRawSession(url);
    const pids = await pidsOf(1);
    expect(await eventually(async () => (await countAlive(pids)) === 0)).toBe(true);
    expect(gateway.events('session.ended')).toContainEqual(
      expect.objectContaining({ server: 'local', msg: 'the gateway closed the session' }),
    );
  });

  it('stops the child once the client closed its GET stream and sent nothing more', async () => {
    const session = await openRawSession(url);
    const pids = await pidsOf(1);
    const stream = new AbortController();
    const opened = await fetch(url, {
      headers: { ...session, accept: 'text/event-stream' },
      signal: stream.signal,
    });
    expect(opened.status).toBe(200);
    // While its stream is open the client is there; once it is gone, so is the child.
    stream.abort();
    expect(await eventually(async () => (await countAlive(pids)) === 0)).toBe(true);
  });
});
