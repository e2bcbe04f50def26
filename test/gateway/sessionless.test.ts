import { defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, postRaw } from '../support/rawMcp.js';
import { fixtureCommand, listStdioCatalog, stdioPinFor } from '../transports/support.js';

const SESSION_REQUIRED = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32000, message: 'Bad Request: Mcp-Session-Id header is required (initialize first)' },
};

describe('a 2025-era tools/call without a session: one answer on every route', () => {
  let stateful: PeerHandle;
  let stateless: PeerHandle;
  let gateway: GatewayHarness;

  beforeAll(async () => {
    stateful = await startV1Server({ mode: 'stateful-sse' });
    stateless = await startV1Server({ mode: 'stateless-json' });
    const local = await listStdioCatalog(fixtureCommand());
    gateway = await startGatewayHarness([
      pinFor('web', stateful.url, defaultTools()),
      pinFor('open', stateless.url, defaultTools()),
      stdioPinFor('local', fixtureCommand(), local),
    ]);
  }, 20_000);

  afterAll(async () => {
    await gateway?.close();
    await stateful?.close();
    await stateless?.close();
  });

  it.each([
    ['an HTTP route whose upstream needs a session', 'web'],
    ['a stdio route', 'local'],
  ])(
    '%s answers HTTP 400 -32000 "initialize first", and nothing reaches the upstream',
    async (_label, name) => {
      const reply = await postRaw(`${gateway.url}/${name}/mcp`, callRequest(7, 'echo', { text: 'x' }));
      expect(reply.status).toBe(400);
      expect(reply.messages).toEqual([SESSION_REQUIRED]);
    },
  );

  it('calls nothing upstream, emits no call alert, and logs one line without a stack', async () => {
    expect(stateful.callCount('echo')).toBe(0);
    expect(gateway.events('call.blocked')).toEqual([]);
    expect(gateway.events('request.session_required')).toEqual([
      expect.objectContaining({ server: 'web', level: 30 }),
    ]);
    // A fetch on miss that fails for another reason (a session the upstream does not know) is still
    // refused catalog_unavailable, and logged with why, in one line.
    const reply = await postRaw(`${gateway.url}/web/mcp`, callRequest(9, 'echo', { text: 'x' }), {
      'mcp-session-id': 'not-a-session',
    });
    expect(reply.messages).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: -32040 }) }),
    ]);
    expect(gateway.events('catalog.fetch_failed')).toEqual([
      expect.objectContaining({
        server: 'web',
        failure: {
          message: 'tools/list to the upstream answered HTTP 404',
          code: 'GW_CATALOG_UNAVAILABLE',
          data: { status: 404 },
        },
      }),
    ]);
    expect(JSON.stringify(gateway.logs)).not.toMatch(/"stack"|\\n\s+at /);
  });

  it('still serves a session-less call to a stateless upstream, which needs no session', async () => {
    const reply = await postRaw(`${gateway.url}/open/mcp`, callRequest(8, 'echo', { text: 'stateless' }));
    expect(reply.status).toBe(200);
    expect(reply.messages).toEqual([
      { jsonrpc: '2.0', id: 8, result: { content: [{ type: 'text', text: 'stateless' }] } },
    ]);
  });
});
