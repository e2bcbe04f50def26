// Mcp-Param-* headers (MCP 2026-07-28, SEP-2243) sent by a raw client with exact bytes: the gateway
// is the one parser, so a header that mirrors a tool argument reaches the upstream only as the
// gateway checked it against the body and the pinned x-mcp-header designation. An intermediary (or
// an upstream) that routes or authorizes on the header must never see a value the body does not
// carry.
import { statelessEnvelope } from '../support/rawMcp.js';
import { exchangeRaw, rawPost } from './support/rawClient.js';
import { useCatalogRig } from './support/rig.js';

const DEPLOY = {
  name: 'deploy',
  description: 'Deploys to a region.',
  inputSchema: {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      priority: { type: 'integer', 'x-mcp-header': 'Priority' },
      verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
      target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
      note: { type: 'string' },
    },
    required: ['region'],
  },
};

describe('Mcp-Param-* headers: checked against the argument and the pinned designation', () => {
  const rig = useCatalogRig([DEPLOY]);

  /** A 2026-07-28 tools/call of deploy with these arguments and extra header lines. */
  function call(id: string, args: Record<string, unknown>, headers: [string, string][] = [], key = 'k1') {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'deploy', arguments: args, _meta: statelessEnvelope('raw-adversary') },
    });
    return exchangeRaw(
      rig.endpoint,
      rawPost(rig.endpoint, body, [
        ['Mcp-Protocol-Version', '2026-07-28'],
        ['Mcp-Method', 'tools/call'],
        ['Mcp-Name', 'deploy'],
        ['X-Api-Key', key],
        ...headers,
      ]),
    );
  }

  /** The Mcp-Param-* headers of each tools/call the upstream received. */
  function forwardedParams(): Record<string, string>[] {
    return rig.upstream.requests
      .filter((request) => request.messages.some((message) => message.method === 'tools/call'))
      .map((request) =>
        Object.fromEntries(
          Object.entries(request.headers).filter(([name]) => name.startsWith('mcp-param-')) as [
            string,
            string,
          ][],
        ),
      );
  }

  async function expectRefused(reply: Awaited<ReturnType<typeof call>>, id: string): Promise<void> {
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body)).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32020 } });
    expect(rig.upstream.executed).toEqual([]);
  }

  it('refuses a header that disagrees with its argument (400, -32020), never quoting the values', async () => {
    const reply = await call('1', { region: 'eu-west' }, [['Mcp-Param-Region', 'us-east-SECRET']]);
    await expectRefused(reply, '1');
    expect(reply.body).not.toContain('SECRET');
    expect(rig.gateway.events('request.header_mismatch')).not.toHaveLength(0);
    expect(JSON.stringify(rig.gateway.logs)).not.toContain('SECRET');
  });

  it('refuses a nested designated argument whose header disagrees, and a sentinel that is not canonical Base64', async () => {
    await expectRefused(
      await call('2', { region: 'eu', target: { zone: 'a' } }, [
        ['Mcp-Param-Region', 'eu'],
        ['Mcp-Param-Zone', 'b'],
      ]),
      '2',
    );
    // "SGVsbG8" lacks its padding: a server must reject it, so must the gateway.
    await expectRefused(
      await call('3', { region: 'Hello' }, [['Mcp-Param-Region', '=?base64?SGVsbG8?=']]),
      '3',
    );
  });

  it('refuses a 2026-07-28 call whose designated argument has no header', async () => {
    await expectRefused(await call('4', { region: 'eu', priority: 3 }, [['Mcp-Param-Region', 'eu']]), '4');
  });

  it('refuses two header lines for one argument (read as one joined value)', async () => {
    await expectRefused(
      await call('5', { region: 'eu' }, [
        ['Mcp-Param-Region', 'eu'],
        ['Mcp-Param-Region', 'eu'],
      ]),
      '5',
    );
  });

  it('forwards only the headers it checked, written from the argument; drops every other Mcp-Param-*', async () => {
    const reply = await call('6', { region: ' padded ', priority: 42, verbose: null, note: 'n' }, [
      ['Mcp-Param-Region', `=?base64?${Buffer.from(' padded ').toString('base64')}?=`],
      // Equal as a number: forwarded as the gateway writes 42.
      ['Mcp-Param-Priority', '42.0'],
      // A null argument has no header; an undesignated name is not the gateway's to vouch for.
      ['Mcp-Param-Verbose', 'true'],
      ['Mcp-Param-Note', 'n'],
      ['Mcp-Param-Tenant', 'other-tenant'],
    ]);
    expect(reply.status).toBe(200);
    expect(rig.upstream.executed).toEqual(['deploy']);
    expect(forwardedParams()).toEqual([
      {
        'mcp-param-region': `=?base64?${Buffer.from(' padded ').toString('base64')}?=`,
        'mcp-param-priority': '42',
      },
    ]);
  });

  it('forwards no Mcp-Param-* on a request that is not a tools/call', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'l',
      method: 'tools/list',
      params: { _meta: statelessEnvelope() },
    });
    const reply = await exchangeRaw(
      rig.endpoint,
      rawPost(rig.endpoint, body, [
        ['Mcp-Protocol-Version', '2026-07-28'],
        ['Mcp-Method', 'tools/list'],
        ['Mcp-Param-Region', 'eu'],
      ]),
    );
    expect(reply.status).toBe(200);
    const listed = rig.upstream.requests.filter((request) => request.messages[0]?.method === 'tools/list');
    expect(listed.map((request) => request.headers['mcp-param-region'])).toEqual([undefined]);
  });

  it("keeps one catalog per caller whatever its Mcp-Param-* values (they never split a caller's key)", async () => {
    // Callers no earlier test used: their catalogs are not yet known to the gateway.
    expect((await call('7', { region: 'eu' }, [['Mcp-Param-Region', 'eu']], 'k-a')).status).toBe(200);
    expect((await call('8', { region: 'us' }, [['Mcp-Param-Region', 'us']], 'k-a')).status).toBe(200);
    const lists = (): number =>
      rig.upstream.requests.filter((request) => request.messages[0]?.method === 'tools/list').length;
    // The first call listed for this caller (fetch on miss); the second was decided from that listing.
    expect(lists()).toBe(1);
    // Another caller (another X-Api-Key) is listed for on its own.
    expect((await call('9', { region: 'eu' }, [['Mcp-Param-Region', 'eu']], 'k-b')).status).toBe(200);
    expect(lists()).toBe(2);
    expect(rig.upstream.executed).toEqual(['deploy', 'deploy', 'deploy']);
  });
});
