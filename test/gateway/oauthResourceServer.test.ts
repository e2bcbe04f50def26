import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Client as V2Client } from '@modelcontextprotocol/client';
import {
  connectV1Client,
  connectV2Client,
  defaultTools,
  startV1Server,
  type PeerHandle,
} from '../peers/index.js';
import { freePort } from '../peers/freePort.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { startTestIdentityProvider, type TestIdentityProvider } from '../support/testIdentityProvider.js';

// resource-server + exchange end to end (docs/oauth.md): real SDK v1 and v2 clients hold tokens of
// a real identity provider for the gateway's route; the gateway verifies them (JWKS over HTTP),
// exchanges them (RFC 8693) for the upstream's audience, and the upstream verifies what it gets.
// One provider, one upstream and one gateway for the whole file.

const CLIENT_ID = 'toolpin-gateway';
const SECRET_ENV = 'TOOLPIN_TEST_OAUTH_RS_SECRET';
const WRONG_ENV = 'TOOLPIN_TEST_OAUTH_RS_WRONG';
const SCOPE = 'mcp:tools';
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

let idp: TestIdentityProvider;
let upstream: PeerHandle;
let gateway: GatewayHarness;
let base: string;
/** Every token a client of this file held: none may appear in a log line, /status or /metrics. */
const clientTokens: string[] = [];

function resourceServer(name: string, upstreamCredential: Record<string, unknown>): Record<string, unknown> {
  return {
    mode: 'resource-server',
    resource: `${base}/${name}/mcp`,
    issuer: idp.issuer,
    scopes: [SCOPE],
    upstreamCredential,
  };
}

async function tokenFor(route: string, overrides: { sub?: string; scope?: string } = {}): Promise<string> {
  const token = await idp.mint({
    sub: overrides.sub ?? 'alice',
    aud: `${base}/${route}/mcp`,
    scope: overrides.scope ?? SCOPE,
  });
  clientTokens.push(token);
  return token;
}

function post(route: string, headers: Record<string, string>, body: unknown = INITIALIZE): Promise<Response> {
  return fetch(`${base}/${route}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** The Authorization values the upstream received. */
const upstreamAuthorizations = (): string[] =>
  upstream.requests.map((request) => String(request.headers.authorization ?? ''));

beforeAll(async () => {
  upstream = await startV1Server({
    mode: 'stateful-sse',
    // The upstream accepts only tokens of the provider issued for its own URL.
    authorize: async (authorization) => {
      if (authorization?.startsWith('Bearer ') !== true) return false;
      return idp.verify(authorization.slice(7), upstream.url).then(
        () => true,
        () => false,
      );
    },
  });
  idp = await startTestIdentityProvider({
    clients: { [CLIENT_ID]: { secret: 'gateway-secret', audiences: [upstream.url] } },
  });
  process.env[SECRET_ENV] = 'gateway-secret';
  process.env[WRONG_ENV] = 'Bearer not-a-token-the-upstream-accepts';
  base = `http://127.0.0.1:${await freePort()}`;
  const exchange = { kind: 'exchange', clientId: CLIENT_ID, clientSecretEnv: SECRET_ENV };
  const pins = [
    { ...pinFor('files', upstream.url, defaultTools()), auth: resourceServer('files', exchange) },
    { ...pinFor('other', upstream.url, defaultTools()), auth: resourceServer('other', exchange) },
    {
      ...pinFor('broken', upstream.url, defaultTools()),
      auth: resourceServer('broken', { kind: 'static', headersFromEnv: { authorization: WRONG_ENV } }),
    },
    pinFor('open', upstream.url, defaultTools()),
    {
      ...pinFor('service', upstream.url, defaultTools()),
      auth: resourceServer('service', {
        kind: 'client-credentials',
        clientId: CLIENT_ID,
        clientSecretEnv: SECRET_ENV,
      }),
    },
    {
      ...pinFor('opaque', upstream.url, defaultTools()),
      auth: {
        ...resourceServer('opaque', exchange),
        introspection: {
          endpoint: idp.introspectionEndpoint,
          clientId: CLIENT_ID,
          clientSecretEnv: SECRET_ENV,
        },
      },
    },
  ];
  gateway = await startGatewayHarness(pins, {
    listen: { host: '127.0.0.1', port: Number(new URL(base).port) },
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await idp?.close();
  delete process.env[SECRET_ENV];
  delete process.env[WRONG_ENV];
});

describe('resource-server + exchange, end to end', () => {
  test('an SDK v1 client lists and calls; the upstream sees only exchanged tokens for its own audience', async () => {
    const token = await tokenFor('files');
    const before = upstream.requests.length;
    const client: Client = await connectV1Client(`${base}/files/mcp`, {
      headers: { authorization: `Bearer ${token}` },
    });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo', 'slow']);
      const result = await client.callTool({ name: 'echo', arguments: { text: 'through the gateway' } });
      expect(result.content).toEqual([{ type: 'text', text: 'through the gateway' }]);
    } finally {
      await client.close();
    }
    const seen = upstreamAuthorizations().slice(before);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).not.toContain(`Bearer ${token}`);
    for (const authorization of new Set(seen)) {
      const claims = await idp.verify(authorization.slice('Bearer '.length), upstream.url);
      expect(claims.sub).toBe('alice');
    }
    const exchanges = idp.grants.filter((grant) => grant.grantType.endsWith('token-exchange'));
    expect(exchanges.at(-1)).toMatchObject({ clientId: CLIENT_ID, audience: upstream.url, subject: 'alice' });
  });

  test('an SDK v2 client lists and calls through the same route', async () => {
    const token = await tokenFor('files', { sub: 'bob' });
    const before = upstream.requests.length;
    const client: V2Client = await connectV2Client(`${base}/files/mcp`, {
      headers: { authorization: `Bearer ${token}` },
    });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('add');
      const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      expect(result.content).toEqual([{ type: 'text', text: '5' }]);
    } finally {
      await client.close();
    }
    const seen = upstreamAuthorizations().slice(before);
    expect(seen).not.toContain(`Bearer ${token}`);
    for (const authorization of new Set(seen))
      expect((await idp.verify(authorization.slice(7), upstream.url)).sub).toBe('bob');
  });
});

describe('the other credentials', () => {
  test('client-credentials: the upstream sees the gateway service token, never the client token', async () => {
    const token = await tokenFor('service');
    const before = upstream.requests.length;
    const answer = await post('service', { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    await answer.text();
    const seen = upstreamAuthorizations().slice(before);
    expect(seen).toHaveLength(1);
    const claims = await idp.verify(seen[0]!.slice(7), upstream.url);
    expect(claims.sub).toBe(CLIENT_ID);
  });

  test('introspection (RFC 7662) admits an active token for the route and refuses an expired one', async () => {
    const token = await tokenFor('opaque');
    const admitted = await post('opaque', { authorization: `Bearer ${token}` });
    expect(admitted.status).toBe(200);
    await admitted.text();
    const expired = await idp.mint({
      sub: 'alice',
      aud: `${base}/opaque/mcp`,
      scope: SCOPE,
      expiresIn: -120,
    });
    const foreign = await idp.mint({ sub: 'alice', aud: `${base}/files/mcp`, scope: SCOPE });
    clientTokens.push(expired, foreign);
    for (const refused of [expired, foreign]) {
      const answer = await post('opaque', { authorization: `Bearer ${refused}` });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    expect(idp.hits.get('/introspect')).toBe(3);
  });

  test('introspection answers without "exp" or "iss" are refused 401, as JWTs without them are', async () => {
    const before = upstream.requests.length;
    const introspected = idp.hits.get('/introspect') ?? 0;
    const cases = [
      { without: ['exp'], description: 'the token has no expiry ("exp")' },
      { without: ['iss'], description: 'the token names no issuer ("iss")' },
      { without: ['exp', 'iss'], description: 'the token names no issuer ("iss")' },
    ];
    for (const { without, description } of cases) {
      const token = await idp.mint({
        sub: 'alice',
        aud: `${base}/opaque/mcp`,
        scope: SCOPE,
        introspectedWithout: without,
      });
      clientTokens.push(token);
      const answer = await post('opaque', { authorization: `Bearer ${token}` });
      expect([without, answer.status]).toEqual([without, 401]);
      const challenge = answer.headers.get('www-authenticate') ?? '';
      expect(challenge).toContain('error="invalid_token"');
      expect(await answer.json()).toEqual({ error: 'invalid_token', error_description: description });
    }
    // Each was asked of the provider (answered active, without the member), and none went upstream.
    expect(idp.hits.get('/introspect')).toBe(introspected + cases.length);
    expect(upstream.requests.length).toBe(before);
    // The same provider's complete answer for the same kind of token is admitted.
    const complete = await post('opaque', { authorization: `Bearer ${await tokenFor('opaque')}` });
    expect(complete.status).toBe(200);
    await complete.text();
  });
});

describe('refusals: nothing reaches the upstream', () => {
  const expectRefused = async (
    response: Response,
    status: number,
    error: string | undefined,
  ): Promise<string> => {
    expect(response.status).toBe(status);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/files/mcp"`);
    if (error !== undefined) expect(challenge).toContain(`error="${error}"`);
    return challenge;
  };

  test('tokens of another route, of the upstream, expired, or of another issuer are refused 401', async () => {
    const before = upstream.requests.length;
    const cases = [
      await tokenFor('other'),
      await idp.mint({ sub: 'alice', aud: upstream.url, scope: SCOPE }),
      await idp.mint({ sub: 'alice', aud: `${base}/files/mcp`, scope: SCOPE, expiresIn: -120 }),
      await idp.mint({ sub: 'alice', aud: `${base}/files/mcp`, scope: SCOPE, iss: 'http://127.0.0.1:1' }),
    ];
    clientTokens.push(...cases);
    for (const token of cases)
      await expectRefused(await post('files', { authorization: `Bearer ${token}` }), 401, 'invalid_token');
    expect(upstream.requests.length).toBe(before);
  });

  test('a token without the route scope is refused 403 insufficient_scope, naming the scope to step up to', async () => {
    const token = await tokenFor('files', { scope: 'other:scope' });
    const challenge = await expectRefused(
      await post('files', { authorization: `Bearer ${token}` }),
      403,
      'insufficient_scope',
    );
    expect(challenge).toContain(`scope="${SCOPE}"`);
  });

  test('the route serves its own protected resource metadata; the gateway is no authorization server', async () => {
    const metadata = await fetch(`${base}/.well-known/oauth-protected-resource/files/mcp`);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toEqual({
      resource: `${base}/files/mcp`,
      authorization_servers: [idp.issuer],
      scopes_supported: [SCOPE],
      bearer_methods_supported: ['header'],
    });
    for (const path of [
      '/.well-known/oauth-protected-resource/open/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/register',
      // Several resource-server routes: the root form names none of them.
      '/.well-known/oauth-protected-resource',
    ]) {
      const answer = await fetch(`${base}${path}`, { method: path === '/register' ? 'POST' : 'GET' });
      expect([path, answer.status]).toEqual([path, 404]);
      expect(answer.headers.get('content-type')).toContain('application/json');
      expect(((await answer.json()) as { error: string }).error).toBe('not_found');
    }
    const transparent = await fetch(`${base}/.well-known/oauth-protected-resource/open/mcp`);
    expect(((await transparent.json()) as { message: string }).message).toContain('transparent');
  });

  test('an upstream 401 reaches the client as -32041 naming the server, never as a challenge', async () => {
    const token = await tokenFor('broken');
    const client = connectV1Client(`${base}/broken/mcp`, { headers: { authorization: `Bearer ${token}` } });
    await expect(client).rejects.toThrow(/-32041.*broken|broken.*refused the gateway's credential/s);
    const answer = await post('broken', { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(502);
    expect(answer.headers.get('www-authenticate')).toBeNull();
    const body = (await answer.json()) as { error: { code: number; data: Record<string, unknown> } };
    expect(body.error.code).toBe(-32041);
    expect(body.error.data).toMatchObject({ server: 'broken', reason: 'upstream_auth', status: 401 });
  });

  test('no token, log line, /status or /metrics repeats a client token or an exchanged one', async () => {
    const exchanged = idp.grants.flatMap((grant) =>
      grant.accessToken === undefined ? [] : [grant.accessToken],
    );
    expect(exchanged.length).toBeGreaterThan(0);
    const admin = gateway.running.adminUrl;
    const texts = [
      JSON.stringify(gateway.logs),
      await (await fetch(`${admin}/status`)).text(),
      await (await fetch(`${admin}/metrics`)).text(),
    ];
    for (const secret of [...clientTokens, ...exchanged, 'gateway-secret'])
      for (const text of texts) expect(text.includes(secret)).toBe(false);
    // The refusals were logged, by reason only.
    expect(gateway.events('auth.refused').length).toBeGreaterThan(0);
  });
});
