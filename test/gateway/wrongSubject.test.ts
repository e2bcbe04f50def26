import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { startV1Server, type PeerHandle } from '../peers/index.js';
import type { GatewayHarness } from '../support/gatewayHarness.js';
import { startPinnedChain, type PinnedChain } from '../support/pinnedChain.js';
import { rejectionOf } from '../support/rejection.js';

/** The catalog of some other server: not one tool name in common with the upstream's. */
const OTHER_SERVER: Tool[] = [
  {
    name: 'read_file',
    description: 'Reads a file.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  },
  {
    name: 'write_file',
    description: 'Writes a file.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  },
];

describe('gateway when the upstream is not the pinned server (wrong subject)', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let client: Client;
  let chain: PinnedChain;

  beforeAll(async () => {
    chain = await startPinnedChain(await startV1Server({ mode: 'stateless-json' }), {
      name: 'files',
      tools: OTHER_SERVER,
    });
    ({ upstream, gateway, client } = chain);
  });

  afterAll(() => chain.close());

  it('lists no tool and reports the catalog as wrong_subject', async () => {
    const listed = await client.listTools();
    expect(listed.tools).toEqual([]);
    const drift = gateway.events('catalog.drift');
    expect(drift).toHaveLength(1);
    const findings = drift[0]?.drift as { kind: string }[];
    expect(findings[0]).toMatchObject({ kind: 'wrong_subject', key: '*' });
    expect(findings.map((finding) => finding.kind)).toEqual(expect.arrayContaining(['added', 'removed']));
    expect(gateway.events('catalog.verified')).toHaveLength(0);
  });

  it.each([
    ['a tool the upstream serves', 'echo', { text: 'x' }],
    ['a tool of the pin', 'read_file', { path: '/etc/passwd' }],
  ])('blocks every call with wrong_subject: %s', async (_label, name, args) => {
    const error = await rejectionOf(client.callTool({ name, arguments: args }), McpError);
    expect(error.code).toBe(-32040);
    expect(error.data).toMatchObject({ reason: 'wrong_subject', server: 'files', tool: name });
    expect(upstream.callCount()).toBe(0);
    expect(upstream.requests.filter((request) => request.method === 'tools/call')).toHaveLength(0);
  });

  it('logs each refusal', () => {
    expect(
      gateway.events('call.blocked').map((line) => (line.decision as { reason: string }).reason),
    ).toEqual(['wrong_subject', 'wrong_subject']);
  });
});
