import { defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, openRawSession, postRaw } from '../support/rawMcp.js';

// Four times sessions.max, opened in batches of two fifths of it: every session past the bound
// evicts one, whole batches are admitted at once near it, and the first session opened is long
// evicted when it calls again. Those cases are the same for any bound (eviction takes the least
// recently used session, one per admission, whatever the count), so the bound is a small one: 60
// sessions of 3 exchanges each, where 200 against a bound of 50 ran the same cases in 600.
const SESSIONS = 60;
const MAX = 15;
const CONCURRENCY = 6;

describe('gateway session memory under many sessions', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let endpoint: string;

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateful-sse' });
    gateway = await startGatewayHarness([pinFor('demo', upstream.url, defaultTools())], {
      sessions: { max: MAX, ttlSeconds: 60 },
    });
    endpoint = `${gateway.url}/demo/mcp`;
  });

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it(`keeps at most sessions.max observations while ${SESSIONS} sessions list and call`, async () => {
    const sessions: Record<string, string>[] = [];
    let peak = 0;
    for (let start = 0; start < SESSIONS; start += CONCURRENCY) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, SESSIONS - start) }, async () => {
          const session = await openRawSession(endpoint);
          const listed = await postRaw(endpoint, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, session);
          expect(listed.messages).toHaveLength(1);
          return session;
        }),
      );
      sessions.push(...batch);
      peak = Math.max(peak, gateway.running.gateway.sessions.size);
    }
    expect(upstream.sessions()).toBe(SESSIONS);
    expect(gateway.events('catalog.verified')).toHaveLength(SESSIONS);
    expect(peak).toBeLessThanOrEqual(MAX);
    expect(gateway.running.gateway.sessions.size).toBeLessThanOrEqual(MAX);
    expect(gateway.running.gateway.sessions.size).toBeGreaterThan(0);

    // An evicted session's observation is rebuilt on demand: its next call still gets decided.
    const oldest = sessions[0];
    if (oldest === undefined) throw new Error('no session');
    const listsBefore = upstream.requests.filter((request) => request.method === 'tools/list').length;
    const reply = await postRaw(endpoint, callRequest(2, 'echo', { text: 'still decided' }), oldest);
    expect(reply.messages).toEqual([
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'still decided' }] } },
    ]);
    expect(upstream.requests.filter((request) => request.method === 'tools/list').length).toBe(
      listsBefore + 1,
    );
    expect(gateway.running.gateway.sessions.size).toBeLessThanOrEqual(MAX);
    // 180 exchanges: a generous bound for a loaded 2-core machine, not a speed expectation.
  }, 30_000);

  it('forgets a session the client deletes', async () => {
    const session = await openRawSession(endpoint);
    await postRaw(endpoint, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, session);
    const before = gateway.running.gateway.sessions.size;
    const response = await fetch(endpoint, { method: 'DELETE', headers: session });
    expect(response.status).toBe(200);
    await response.text();
    // The gateway forgets on the response's 'finish', which may trail the client's read by a tick.
    for (let attempt = 0; attempt < 50 && gateway.running.gateway.sessions.size !== before - 1; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(gateway.running.gateway.sessions.size).toBe(before - 1);
  });
});
