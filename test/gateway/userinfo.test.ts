import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectV1Client, defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, initializeRequest, openRawSession, postRaw } from '../support/rawMcp.js';
import { runToolpin } from '../support/runToolpin.js';

// A password with what URLs make hard: a quote the URL parser keeps, a space and an "@" escaped.
const USER = 'agent';
const PASSWORD = "Pa'ss w@rd-S3CRET";
const USERINFO = `${USER}:Pa'ss%20w%40rd-S3CRET`;
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

describe('an upstream URL with userinfo (http://user:password@host/…)', () => {
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  let endpoint: string;
  let client: Client | undefined;

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateful-sse', authorization: BASIC });
    const { host, pathname } = new URL(upstream.url);
    gateway = await startGatewayHarness([
      pinFor('demo', `http://${USERINFO}@${host}${pathname}`, defaultTools()),
    ]);
    endpoint = `${gateway.url}/demo/mcp`;
  });

  afterAll(async () => {
    await client?.close();
    await gateway.close();
    await upstream.close();
  });

  it('is real: the upstream refuses a request without the Basic credential', async () => {
    const reply = await postRaw(upstream.url, initializeRequest());
    expect({ status: reply.status, challenge: reply.headers.get('www-authenticate') }).toEqual({
      status: 401,
      challenge: 'Basic realm="mcp"',
    });
  });

  it('reaches the upstream as an Authorization: Basic header through the proxy', async () => {
    client = await connectV1Client(endpoint);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'add', 'slow']);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toEqual({
      content: [{ type: 'text', text: 'hi' }],
    });
    const methods = upstream.requests
      .filter((request) => request.headers.authorization === BASIC)
      .map((request) => request.method);
    expect(methods).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
  });

  it('reaches the upstream with the listing the gateway makes itself (fetch on miss)', async () => {
    const session = await openRawSession(endpoint);
    const reply = await postRaw(endpoint, callRequest('c', 'add', { a: 2, b: 3 }), session);
    expect(reply.messages).toEqual([
      { jsonrpc: '2.0', id: 'c', result: { content: [{ type: 'text', text: '5' }] } },
    ]);
    const own = upstream.requests.filter(
      (request) =>
        request.method === 'tools/list' &&
        request.headers['mcp-session-id'] === session['mcp-session-id'] &&
        String(request.id).startsWith('toolpin-'),
    );
    expect(own.map((request) => request.headers.authorization)).toEqual([BASIC]);
    expect(gateway.events('catalog.fetch_failed')).toEqual([]);
  });

  it('is never shown: logs and /status show [redacted]@', async () => {
    const status = await (await fetch(`${gateway.running.adminUrl}/status`)).text();
    for (const text of [JSON.stringify(gateway.logs), status]) {
      expect(text).not.toContain('S3CRET');
      expect(text).not.toContain(Buffer.from(`${USER}:${PASSWORD}`).toString('base64'));
    }
    expect(JSON.parse(status)).toMatchObject({
      servers: [
        expect.objectContaining({
          name: 'demo',
          upstream: expect.stringMatching(/^http:\/\/\[redacted\]@127\.0\.0\.1:/),
        }),
      ],
    });
  });

  it('is sent by toolpin check too, which finds the catalog as pinned', async () => {
    const file = join(gateway.dir, 'demo-check.json');
    const { host, pathname } = new URL(upstream.url);
    await writeFile(
      file,
      JSON.stringify(pinFor('demo', `http://${USERINFO}@${host}${pathname}`, defaultTools())),
    );
    const run = await runToolpin(['check', file]);
    expect({ code: run.code, leaked: `${run.stdout}${run.stderr}`.includes('S3CRET') }).toEqual({
      code: 0,
      leaked: false,
    });
    // A spawned CLI: slower than the 5 s default when the whole suite shares the machine.
  }, 30_000);
});
