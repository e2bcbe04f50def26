import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError } from '../../src/errors.js';
import { bearerFetch } from '../../src/transports/bearerFetch.js';
import { OAuthFetchRefused, oauthFetch } from '../../src/transports/oauthFetch.js';
import { OAuthTokenStore, defaultTokenStoreFile } from '../../src/transports/oauthTokenStore.js';
import { UpstreamOAuth } from '../../src/transports/upstreamOAuth.js';

// The client mode's own checks, against a real server on 127.0.0.1 that records what it was asked.

let server: Server;
let base: string;
const asked: string[] = [];
/** What the server answers per path (JSON), or a status. */
const answers = new Map<
  string,
  { status?: number; json?: unknown; body?: string; location?: string; challenge?: string }
>();
const bearers: (string | undefined)[] = [];
let dir: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(req.url ?? '');
    bearers.push(req.headers.authorization);
    const answer = answers.get(req.url ?? '') ?? { status: 404 };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (answer.location !== undefined) headers.location = answer.location;
    if (answer.challenge !== undefined) headers['www-authenticate'] = answer.challenge;
    res.writeHead(answer.status ?? 200, headers);
    res.end(answer.body ?? (answer.json === undefined ? '' : JSON.stringify(answer.json)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'toolpin-oauth-unit-'));
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  asked.length = 0;
  bearers.length = 0;
  answers.clear();
});

function client(issuer?: string, store = new OAuthTokenStore(join(dir, 'unused.json'))): UpstreamOAuth {
  return new UpstreamOAuth({
    server: 'remote',
    pinFile: '/pins/remote.yaml',
    url: `${base}/mcp`,
    auth: { mode: 'client', ...(issuer === undefined ? {} : { issuer }) },
    store,
  });
}

/** An upstream whose metadata names `${base}/idp`, and that authorization server's metadata. */
function serveMetadata(): void {
  answers.set('/.well-known/oauth-protected-resource/mcp', {
    json: { resource: `${base}/mcp`, authorization_servers: [`${base}/idp`] },
  });
  answers.set('/.well-known/oauth-authorization-server/idp', {
    json: {
      issuer: `${base}/idp`,
      authorization_endpoint: `${base}/idp/authorize`,
      token_endpoint: `${base}/idp/token`,
      response_types_supported: ['code'],
    },
  });
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(GatewayError);
  expect((error as GatewayError).code).toBe('GW_UPSTREAM_AUTH');
  return error as GatewayError;
}

describe('oauthFetch: the fetch of every OAuth request of the client mode', () => {
  it('refuses plain HTTP off this machine before sending anything', async () => {
    await expect(oauthFetch()('http://auth.example/.well-known/oauth-authorization-server')).rejects.toThrow(
      OAuthFetchRefused,
    );
  });

  it('refuses an answer over its size bound, and hands a smaller one on read whole', async () => {
    answers.set('/big', { body: 'x'.repeat(2048) });
    await expect(oauthFetch({ maxBytes: 1024 })(`${base}/big`)).rejects.toThrow(/larger than 1024 bytes/);
    answers.set('/small', { json: { ok: true } });
    expect(await (await oauthFetch({ maxBytes: 1024 })(`${base}/small`)).json()).toEqual({ ok: true });
  });

  it('follows no redirect', async () => {
    answers.set('/moved', { status: 302, location: 'http://127.0.0.2:1/elsewhere' });
    const answer = await oauthFetch()(`${base}/moved`);
    expect(answer.status).toBe(302);
    expect(asked).toEqual(['/moved']);
  });
});

describe('UpstreamOAuth.discover: metadata checked before it is trusted', () => {
  it('reads no protected resource metadata announced on another origin', async () => {
    const refused = await refusal(
      client().discover({
        resourceMetadataUrl: new URL('http://127.0.0.2:9/.well-known/oauth-protected-resource'),
      }),
    );
    expect(refused.data).toEqual({ server: 'remote', reason: 'metadata_invalid', file: '/pins/remote.yaml' });
    expect(asked).toEqual([]);
  });

  it('contacts no authorization server of metadata whose resource is another one', async () => {
    answers.set('/.well-known/oauth-protected-resource/mcp', {
      json: { resource: `${base}/other`, authorization_servers: [`${base}/as`] },
    });
    const refused = await refusal(client().discover());
    expect(refused.message).toContain('its authorization servers are not trusted');
    expect(asked).toEqual(['/.well-known/oauth-protected-resource/mcp']);
  });

  it('refuses an authorization server other than the pinned issuer before contacting it (drift)', async () => {
    answers.set('/.well-known/oauth-protected-resource/mcp', {
      json: { resource: `${base}/mcp`, authorization_servers: [`${base}/new-idp`] },
    });
    const refused = await refusal(client(`${base}/idp`).discover());
    expect(refused.data.reason).toBe('issuer_drift');
    expect(refused.message).toContain(`set auth.issuer in /pins/remote.yaml`);
    expect(asked).toEqual(['/.well-known/oauth-protected-resource/mcp']);
  });

  it('refuses authorization server metadata that names another issuer', async () => {
    answers.set('/.well-known/oauth-protected-resource/mcp', {
      json: { resource: `${base}/mcp`, authorization_servers: [`${base}/idp`] },
    });
    answers.set('/.well-known/oauth-authorization-server/idp', {
      json: {
        issuer: 'https://evil.example/',
        authorization_endpoint: `${base}/idp/authorize`,
        token_endpoint: `${base}/idp/token`,
        response_types_supported: ['code'],
      },
    });
    const refused = await refusal(client().discover());
    expect(refused.message).toContain('names another issuer (https://evil.example/)');
  });

  it('an upstream without protected resource metadata is its own authorization server (MCP 2025-03-26)', async () => {
    const discovery = await client().discover();
    expect(discovery).toMatchObject({ issuer: base, authorizationServerUrl: base });
    expect(discovery.resourceMetadata).toBeUndefined();
    expect(asked).toContain('/.well-known/oauth-protected-resource');
    expect(asked).toContain('/.well-known/oauth-authorization-server');
  });

  it('without a token, accessToken fails closed naming the toolpin login to run', async () => {
    serveMetadata();
    const refused = await refusal(client(`${base}/idp`).accessToken());
    expect(refused.data.reason).toBe('login_required');
    expect(refused.message).toBe(
      `server remote: no OAuth token for ${base}/idp; run: toolpin login /pins/remote.yaml`,
    );
  });
});

describe('bearerFetch: the upstream requests of the client mode', () => {
  it('sends the stored bearer, and refuses a 403 insufficient_scope -32041 naming the scope and the login', async () => {
    serveMetadata();
    answers.set('/mcp', { status: 403, challenge: 'Bearer error="insufficient_scope", scope="files:write"' });
    const store = new OAuthTokenStore(join(dir, 'scoped.json'));
    await store.update(`${base}/idp`, () => ({
      resources: {
        [`${base}/mcp`]: {
          tokens: { access_token: 'stored-token', token_type: 'bearer' },
          redirectUrl: 'http://127.0.0.1:1/callback',
        },
      },
    }));
    const answer = await bearerFetch(client(`${base}/idp`, store))(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer the-clients-own' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x' } }),
    });
    expect(bearers.at(-1)).toBe('Bearer stored-token');
    expect(bearers).not.toContain('Bearer the-clients-own');
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as {
      id: number;
      error: { code: number; message: string; data: unknown };
    };
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32041);
    expect(body.error.data).toEqual({
      reason: 'upstream_auth',
      server: 'remote',
      auth: 'insufficient_scope',
    });
    expect(body.error.message).toContain('the upstream asks for the scope "files:write"');
    expect(body.error.message).not.toContain('stored-token');
  });
});

describe('OAuthTokenStore', () => {
  it('writes a 0600 file, and makes one readable by others 0600 again', async () => {
    const file = join(dir, 'store', 'tokens.json');
    const store = new OAuthTokenStore(file);
    await store.update('https://idp.example/', (record) => ({ ...record, resources: {} }));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await chmod(file, 0o644);
    await store.update('https://idp.example/', (record) => record);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: 1,
      issuers: { 'https://idp.example/': { resources: {} } },
    });
  });

  it('keeps every change of concurrent updates to one file (two routes refreshing at once)', async () => {
    const file = join(dir, 'concurrent.json');
    // One store per client-mode pin, as upstreamOAuthOf makes them, all on the user's one file.
    const issuers = Array.from({ length: 8 }, (_, index) => `https://idp${index}.example/`);
    await Promise.all(
      issuers.map((issuer) =>
        new OAuthTokenStore(file).update(issuer, (record) => ({ ...record, resources: {} })),
      ),
    );
    const written = JSON.parse(await readFile(file, 'utf8')) as { issuers: Record<string, unknown> };
    expect(Object.keys(written.issuers).sort()).toEqual(issuers);
  });

  it('reads a file that does not parse as empty, and lives where TOOLPIN_TOKEN_STORE says', async () => {
    const file = join(dir, 'garbage.json');
    await writeFile(file, 'not json');
    expect(await new OAuthTokenStore(file).issuer('https://idp.example/')).toBeUndefined();
    expect(defaultTokenStoreFile({ TOOLPIN_TOKEN_STORE: file })).toBe(file);
    expect(defaultTokenStoreFile({})).toMatch(/\.toolpin\/oauth-tokens\.json$/);
  });
});
