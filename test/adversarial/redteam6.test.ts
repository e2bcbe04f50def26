import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SessionOwners } from '../../packages/gateway/dist/ingress/sessionOwners.js';
import { AUTH_SESSION_OWNERS_MAX } from '../../packages/gateway/dist/defaults.js';
import { openHttpStream } from '../support/httpStream.js';
import { callRequest, initializeRequest } from '../support/rawMcp.js';
import { useScoped } from '../support/useScoped.js';
import { answerJson, type UpstreamBehaviour } from './support/maliciousUpstream.js';
import { exchangeRaw, headerOf, rawPost, rawRequest } from './support/rawClient.js';
import { listRequest, postJson, startRig } from './support/rig.js';

// Red team 6: an MCP session belongs to the principal that opened it (ingress/sessionOwners.ts).

const KEYS = { alice: 'alice-key-0123456789', bob: 'bob-key-9876543210' } as const;
const INIT_RESULT = {
  protocolVersion: '2025-06-18',
  capabilities: { tools: { listChanged: true } },
  serverInfo: { name: 'uuid-upstream', version: '1.0.0' },
};
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('redteam6: session owners on a transparent route', () => {
  const rig = useScoped(() =>
    startRig({
      gateway: {
        aggregate: {},
        principals: [
          { name: 'alice', apiKey: { sha256: sha256(KEYS.alice) }, servers: { mal: '*' } },
          { name: 'bob', apiKey: { sha256: sha256(KEYS.bob) }, servers: { mal: '*' } },
        ],
      },
    }),
  );

  it('attack: bob pre-claims the id the upstream will issue to alice next: alice keeps her session, bob gets none', async () => {
    const { upstream, endpoint } = rig;
    // Direct: the upstream's ids are predictable (a counter), as some upstreams' are.
    const direct = await postJson(upstream.url, initializeRequest('d1'));
    const next = headerOf(direct, 'mcp-session-id')!.replace(/\d+$/, (n) => String(Number(n) + 1));
    // Through the gateway: bob uses that id before it exists (the first use claims it).
    const bob = { 'X-Toolpin-Key': KEYS.bob, 'Mcp-Protocol-Version': '2025-06-18', 'Mcp-Session-Id': next };
    await postJson(endpoint, listRequest('b1'), bob);
    const opened = await postJson(endpoint, initializeRequest('a1'), { 'X-Toolpin-Key': KEYS.alice });
    expect(headerOf(opened, 'mcp-session-id')).toBe(next);
    const alice = { ...bob, 'X-Toolpin-Key': KEYS.alice };
    expect((await postJson(endpoint, listRequest('a2'), alice)).status).toBe(200);
    expect((await postJson(endpoint, listRequest('b2'), bob)).status).toBe(404);
  });

  /**
   * An upstream that issues UUID session ids and reads them back as UUIDs (Java's UUID.fromString,
   * Go's uuid.Parse: without regard to case); an unknown session is 404.
   */
  function uuidSessions(issued: Set<string>, seen: string[]): UpstreamBehaviour {
    return ({ req, res, message }) => {
      if (message.method === 'initialize') {
        const id = randomUUID();
        issued.add(id);
        answerJson(res, { jsonrpc: '2.0', id: message.id, result: INIT_RESULT }, 200, {
          'mcp-session-id': id,
        });
        return true;
      }
      const header = req.headers['mcp-session-id'];
      const session = typeof header === 'string' ? header.toLowerCase() : '';
      if (!issued.has(session)) {
        answerJson(
          res,
          { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } },
          404,
        );
        return true;
      }
      seen.push(session);
      return false;
    };
  }

  it("attack: bob sends alice's session id in upper case, which the upstream reads as the same session: 404", async () => {
    const { upstream, endpoint } = rig;
    const issued = new Set<string>();
    const seen: string[] = [];
    upstream.behaviour = uuidSessions(issued, seen);
    try {
      // Direct: the upper-cased id is the same session to this upstream, a made-up one is not.
      const direct = await postJson(upstream.url, initializeRequest('d1'));
      const directId = headerOf(direct, 'mcp-session-id')!;
      const upper = { 'Mcp-Protocol-Version': '2025-06-18', 'Mcp-Session-Id': directId.toUpperCase() };
      expect((await postJson(upstream.url, listRequest('d2'), upper)).status).toBe(200);
      const madeUp = { ...upper, 'Mcp-Session-Id': randomUUID() };
      expect((await postJson(upstream.url, listRequest('d3'), madeUp)).status).toBe(404);
      // Through the gateway: alice's session, bob's key on its upper-cased id.
      const opened = await postJson(endpoint, initializeRequest('a1'), { 'X-Toolpin-Key': KEYS.alice });
      const id = headerOf(opened, 'mcp-session-id')!;
      seen.length = 0;
      const bob = { 'X-Toolpin-Key': KEYS.bob, 'Mcp-Protocol-Version': '2025-06-18' };
      for (const variant of [id.toUpperCase(), `${id[0]!.toUpperCase()}${id.slice(1)}`]) {
        const reply = await postJson(endpoint, listRequest('b1'), { ...bob, 'Mcp-Session-Id': variant });
        expect(reply.status).toBe(404);
      }
      expect(seen).toEqual([]);
      // Alice's own session still works.
      const alice = { ...bob, 'X-Toolpin-Key': KEYS.alice, 'Mcp-Session-Id': id };
      expect((await postJson(endpoint, listRequest('a2'), alice)).status).toBe(200);
      expect(seen).toEqual([id]);
    } finally {
      upstream.reset();
    }
  });

  it("attack: alice's session id sent twice (one joined value, never a valid id) is 404 before any upstream", async () => {
    const { upstream, endpoint } = rig;
    const opened = await postJson(endpoint, initializeRequest('a1'), { 'X-Toolpin-Key': KEYS.alice });
    const id = headerOf(opened, 'mcp-session-id')!;
    upstream.requests.length = 0;
    const body = JSON.stringify(listRequest('b1'));
    const lines: [string, string][] = [
      ['X-Toolpin-Key', KEYS.bob],
      ['Mcp-Protocol-Version', '2025-06-18'],
      ['Mcp-Session-Id', id],
      ['Mcp-Session-Id', id],
    ];
    const reply = await exchangeRaw(endpoint, rawPost(endpoint, body, lines));
    expect(reply.status).toBe(404);
    expect(upstream.requests).toEqual([]);
  });

  it("holds: bob's key on alice's legacy ?sessionId=, GET stream or DELETE is 404, and nothing reaches her session", async () => {
    const { upstream, gateway, endpoint } = rig;
    const stream = await openHttpStream(`${gateway.url}/mal/sse`, {
      headers: { 'x-toolpin-key': KEYS.alice },
    });
    try {
      const text = await stream.waitFor((t) => /sessionId=[^\s]+/.test(t), 'the endpoint event');
      const path = /data: (\S*messages\?sessionId=\S+)/.exec(text)![1]!;
      const body = JSON.stringify(listRequest('b1'));
      const post = (key: string): Promise<{ status: number }> =>
        exchangeRaw(gateway.url, rawPost(`${gateway.url}${path}`, body, [['X-Toolpin-Key', key]]));
      expect((await post(KEYS.bob)).status).toBe(404);
      expect((await post(KEYS.alice)).status).toBe(202);
    } finally {
      stream.close();
    }
    const opened = await postJson(endpoint, initializeRequest('a1'), { 'X-Toolpin-Key': KEYS.alice });
    const id = headerOf(opened, 'mcp-session-id')!;
    upstream.requests.length = 0;
    for (const method of ['GET', 'DELETE']) {
      const reply = await exchangeRaw(
        endpoint,
        rawRequest(method, endpoint, [
          ['X-Toolpin-Key', KEYS.bob],
          ['Mcp-Session-Id', id],
          ['Accept', 'text/event-stream'],
          ['Last-Event-ID', `${id}_1`],
        ]),
      );
      expect(reply.status).toBe(404);
    }
    expect(upstream.requests).toEqual([]);
  });

  it("attack: bob uses the upstream session alice's aggregate session holds with mal (a predictable id) on /mal/mcp: 404", async () => {
    const { upstream, gateway, endpoint } = rig;
    const aggregate = `${gateway.url}/mcp`;
    const opened = await postJson(aggregate, initializeRequest('g1'), { 'X-Toolpin-Key': KEYS.alice });
    const alice = {
      'X-Toolpin-Key': KEYS.alice,
      'Mcp-Protocol-Version': '2025-06-18',
      'Mcp-Session-Id': headerOf(opened, 'mcp-session-id')!,
    };
    upstream.requests.length = 0;
    expect((await postJson(aggregate, callRequest('c1', 'mal__echo', { text: 'x' }), alice)).status).toBe(
      200,
    );
    // The member's upstream session: the gateway's own client opened it (the upstream's counter).
    const member = upstream.requests.map((request) => request.headers['mcp-session-id']).find(Boolean);
    expect(member).toMatch(/^upstream-session-\d+$/);
    upstream.requests.length = 0;
    const bob = {
      'X-Toolpin-Key': KEYS.bob,
      'Mcp-Protocol-Version': '2025-06-18',
      'Mcp-Session-Id': String(member),
    };
    expect((await postJson(endpoint, listRequest('b1'), bob)).status).toBe(404);
    expect(upstream.requests).toEqual([]);
  });
});

describe('redteam6: owners forgotten under pressure', () => {
  it("attack: bob's requests with made-up session ids do not make the gateway forget alice's session", async () => {
    const owners = new SessionOwners();
    // Alice's session, issued on a real answer (as the transparent route's upstream answer is written).
    const server = createServer((_req, res) => {
      owners.recordIssued(res, 'alice');
      res.writeHead(200, { 'Mcp-Session-Id': 'alice-session' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const reply = await fetch(`http://127.0.0.1:${port}/`);
      expect(reply.headers.get('mcp-session-id')).toBe('alice-session');
    } finally {
      server.close();
    }
    // Bob claims as many made-up ids as the gateway remembers owners (each a request of his).
    for (let i = 0; i < AUTH_SESSION_OWNERS_MAX; i += 1) owners.allows(`made-up-${i}`, 'bob');
    expect(owners.allows('alice-session', 'bob')).toBe(false);
    expect(owners.allows('alice-session', 'alice')).toBe(true);
  });
});
