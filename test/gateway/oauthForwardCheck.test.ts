import type { ServerResponse } from 'node:http';
import { defaultTools } from '../peers/index.js';
import { freePort } from '../peers/freePort.js';
import { listenOnLoopback, type LoopbackServer } from '../peers/listen.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { until } from '../support/until.js';

// upstreamCredential forward, at start (docs/oauth.md): the gateway reads each forward route's
// upstream's own protected resource metadata (RFC 9728, over HTTP from a raw node:http upstream) and
// warns when it names another resource or authorization server than the route's.

const ISSUER = 'https://login.example.com';

let upstream: LoopbackServer;
let gateway: GatewayHarness;
let base: string;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function forward(name: string): Record<string, unknown> {
  return {
    ...pinFor(name, `http://127.0.0.1:${upstream.port}/${name}/mcp`, defaultTools()),
    auth: {
      mode: 'resource-server',
      resource: `${base}/${name}/mcp`,
      issuer: ISSUER,
      scopes: ['files:read'],
      upstreamCredential: { kind: 'forward' },
    },
  };
}

beforeAll(async () => {
  base = `http://127.0.0.1:${await freePort()}`;
  upstream = await listenOnLoopback((req, res) => {
    const own = `http://127.0.0.1:${upstream.port}`;
    // "elsewhere" is its own protected resource, at another authorization server; "agreed" is one
    // protected resource with the route (the same audience, the same issuer); "bare" publishes none.
    if (req.url === '/.well-known/oauth-protected-resource/elsewhere/mcp')
      return sendJson(res, 200, {
        resource: `${own}/elsewhere/mcp`,
        authorization_servers: ['https://other-login.example.com'],
      });
    if (req.url === '/.well-known/oauth-protected-resource/agreed/mcp')
      return sendJson(res, 200, { resource: `${base}/agreed/mcp`, authorization_servers: [`${ISSUER}/`] });
    sendJson(res, 404, { error: 'not_found' });
  });
  gateway = await startGatewayHarness([forward('elsewhere'), forward('agreed'), forward('bare')], {
    listen: { host: '127.0.0.1', port: Number(new URL(base).port) },
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const forServer = (event: string, server: string) => () =>
  gateway.events(event).find((line) => line.server === server);

test('a forward route whose upstream names another resource and authorization server is warned about at start', async () => {
  const warning = await until(forServer('auth.forward_mismatch', 'elsewhere'), 'the warning');
  expect(warning.level).toBe(40);
  expect(warning.msg).toContain(
    `names the resource http://127.0.0.1:${upstream.port}/elsewhere/mcp, not the route's ${base}/elsewhere/mcp`,
  );
  expect(warning.msg).toContain(
    `(https://other-login.example.com) do not include the route's issuer ${ISSUER}`,
  );
});

test('an upstream that agrees with the route, or publishes no metadata, is not warned about', async () => {
  await until(forServer('auth.forward_checked', 'agreed'), 'the agreed check');
  const unchecked = await until(forServer('auth.forward_unchecked', 'bare'), 'the bare check');
  expect(unchecked.reason).toBe('status');
  expect(gateway.events('auth.forward_mismatch').map((line) => line.server)).toEqual(['elsewhere']);
});
