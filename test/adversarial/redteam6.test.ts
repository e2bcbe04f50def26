import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SessionOwners } from '../../packages/gateway/dist/ingress/sessionOwners.js';
import { AUTH_SESSION_OWNERS_MAX } from '../../packages/gateway/dist/defaults.js';
import { initializeRequest } from '../support/rawMcp.js';
import { useScoped } from '../support/useScoped.js';
import { headerOf } from './support/rawClient.js';
import { listRequest, postJson, startRig } from './support/rig.js';

// Red team 6: an MCP session belongs to the principal that opened it (ingress/sessionOwners.ts).

const KEYS = { alice: 'alice-key-0123456789', bob: 'bob-key-9876543210' } as const;
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('redteam6: session owners on a transparent route', () => {
  const rig = useScoped(() =>
    startRig({
      gateway: {
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
