import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { parse } from 'yaml';
import { runCli } from '../../packages/gateway/dist/cli/program.js';
import { captureIo } from '../../packages/gateway/test/cli/capturedIo.js';
import { connectV1Client, defaultTools } from '../peers/index.js';
import { startGatewayHarness } from '../support/gatewayHarness.js';
import { startOAuthUpstream, type OAuthUpstream } from '../support/oauthUpstream.js';
import { pinFor } from '../support/pinFor.js';
import { runToolpin } from '../support/runToolpin.js';
import { eventually, startWrapInProcess, type InProcessWrap } from '../transports/support.js';
import { rejectionOf } from '../support/rejection.js';

// toolpin as the upstream's OAuth client (pin file auth.mode: client): `toolpin login` in front of
// the SDK example's authorization server (strict audience), then `toolpin wrap` and `toolpin check`
// with no secret in any config. One upstream and one HOME (the token store) for the file.

const tools = defaultTools().slice(0, 2);
let upstream: OAuthUpstream;
let home: string;
let pinFile: string;
let savedStore: string | undefined;

const storeFile = (): string => join(home, '.toolpin', 'oauth-tokens.json');

interface StoreShape {
  issuers: Record<
    string,
    { resources: Record<string, { tokens: { access_token: string }; expiresAt?: number }> }
  >;
}
const readStore = async (): Promise<StoreShape> =>
  JSON.parse(await readFile(storeFile(), 'utf8')) as StoreShape;
const accessToken = async (): Promise<string> =>
  (await readStore()).issuers[upstream.issuer]!.resources[upstream.url]!.tokens.access_token;

/**
 * Runs `toolpin login <pin> --no-browser` in-process and plays the browser: follows the printed
 * authorization URL (the example's authorize step redirects at once) to the loopback redirect.
 */
async function login(
  file: string,
): Promise<{ code: number; stdout: string; stderr: string; followed: number }> {
  const io = captureIo();
  let stdout = '';
  let followed = 0;
  let browse: Promise<void> = Promise.resolve();
  const output = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      stdout += String(chunk);
      const url = /^(https?:\/\/\S+)$/m.exec(stdout)?.[1];
      if (url !== undefined && followed === 0) {
        followed = 1;
        browse = (async () => {
          const authorize = await fetch(url, { redirect: 'manual' });
          const callback = await fetch(authorize.headers.get('location') ?? '', { redirect: 'manual' });
          followed = callback.status;
        })();
      }
      callback();
    },
  });
  const code = await runCli(['login', file, '--no-browser', '--timeout', '10000'], { ...io, stdout: output });
  await browse;
  return { code, stdout, stderr: io.written.stderr, followed };
}

beforeAll(async () => {
  upstream = await startOAuthUpstream(tools);
  home = await mkdtemp(join(tmpdir(), 'toolpin-oauth-client-'));
  savedStore = process.env.TOOLPIN_TOKEN_STORE;
  // The token store (default ~/.toolpin/oauth-tokens.json): this file's own.
  process.env.TOOLPIN_TOKEN_STORE = storeFile();
  pinFile = join(home, 'remote.yaml');
  const pin = { ...pinFor('remote', upstream.url, tools), auth: { mode: 'client' } };
  await writeFile(pinFile, `# a remote server behind OAuth\n${JSON.stringify(pin, null, 2)}\n`);
});

afterAll(async () => {
  if (savedStore === undefined) delete process.env.TOOLPIN_TOKEN_STORE;
  else process.env.TOOLPIN_TOKEN_STORE = savedStore;
  await upstream?.close();
  await rm(home, { recursive: true, force: true });
});

describe('client mode: toolpin login, then wrap and check with the stored token', () => {
  let wrap: InProcessWrap | undefined;
  afterAll(async () => {
    await wrap?.close();
  });

  it('fails closed before login: check cannot tell and names the toolpin login to run', async () => {
    const run = await runToolpin(['check', pinFile]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('server remote: no OAuth token');
    expect(run.stderr).toContain(`run: toolpin login ${pinFile}`);
    expect(upstream.calls).toEqual([]);
  });

  it('logs in once: metadata validated, PKCE, registration, loopback redirect; token stored 0600, issuer in the pin', async () => {
    const run = await login(pinFile);
    expect(run.stderr).toContain('logged in');
    expect(run.code).toBe(0);
    expect(run.followed).toBe(200);
    const authorizeUrl = new URL(/^(https?:\/\/\S+)$/m.exec(run.stdout)![1]!);
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('resource')).toBe(upstream.url);
    expect(authorizeUrl.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(upstream.grants).toEqual(['authorization_code']);
    expect((await stat(storeFile())).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, '.toolpin'))).mode & 0o777).toBe(0o700);
    const token = await accessToken();
    const pin = await readFile(pinFile, 'utf8');
    expect(pin).toContain('# a remote server behind OAuth');
    expect((parse(pin) as { auth: unknown }).auth).toEqual({ mode: 'client', issuer: upstream.issuer });
    for (const text of [pin, run.stdout, run.stderr]) expect(text).not.toContain(token);
  });

  it('wrap: tools listed and called through the stdio front with the stored bearer, no secret in any config', async () => {
    // In-process: wrap reads TOOLPIN_TOKEN_STORE from this thread's environment, set above as a
    // client's config sets it on wrap's launch.
    wrap = await startWrapInProcess(pinFile, undefined);
    const listed = await wrap.client.listTools();
    expect(listed.tools.map((tool) => tool.name)).toEqual(['echo', 'add']);
    const echoed = await wrap.client.callTool({ name: 'echo', arguments: { text: 'through OAuth' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'through OAuth' }]);
    expect(upstream.bearers.at(-1)).toBe(await accessToken());
  });

  it('wrap: an expired token (401) is refreshed without the user, and the call goes through', async () => {
    const before = await accessToken();
    upstream.expireAccessTokens();
    const added = await wrap!.client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(added.content).toEqual([{ type: 'text', text: '5' }]);
    expect(upstream.grants).toEqual(['authorization_code', 'refresh_token']);
    const after = await accessToken();
    expect(after).not.toBe(before);
    expect(upstream.bearers.at(-1)).toBe(after);
    await eventually(() => wrap!.events('upstream.oauth_refreshed').length > 0);
    expect(wrap!.events('upstream.oauth_refreshed')).toEqual([expect.objectContaining({ server: 'remote' })]);
    expect(JSON.stringify(wrap!.logs)).not.toContain(after);
    expect(JSON.stringify(wrap!.logs)).not.toContain(before);
  });

  it('check: a token expired in the store is refreshed before it is sent; the catalog equals the pin', async () => {
    const store = await readStore();
    store.issuers[upstream.issuer]!.resources[upstream.url]!.expiresAt = Date.now() - 1000;
    await writeFile(storeFile(), JSON.stringify(store));
    const before = await accessToken();
    const sent = upstream.bearers.length;
    const run = await runToolpin(['check', pinFile]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(upstream.grants.at(-1)).toBe('refresh_token');
    expect(upstream.bearers.length).toBeGreaterThan(sent);
    expect(upstream.bearers.slice(sent)).not.toContain(before);
    expect(upstream.bearers.slice(sent)).toContain(await accessToken());
    expect((await stat(storeFile())).mode & 0o777).toBe(0o600);
  });

  it('approve: a first pin (trust-on-first-use) of the OAuth server is written from its live catalog', async () => {
    const first = join(home, 'first.yaml');
    await writeFile(
      first,
      `name: first\nupstream: { url: '${upstream.url}' }\nauth: { mode: client, issuer: '${upstream.issuer}' }\npin: trust-on-first-use\n`,
    );
    const run = await runToolpin(['approve', first, '--yes']);
    expect(run.code).toBe(0);
    const written = parse(await readFile(first, 'utf8')) as {
      pin: { tools: Record<string, string> };
      auth: unknown;
    };
    expect(Object.keys(written.pin.tools)).toEqual(['tool:add', 'tool:echo']);
    expect(written.auth).toEqual({ mode: 'client', issuer: upstream.issuer });
    const check = await runToolpin(['check', first]);
    expect(check.code).toBe(0);
  });

  it("serve: the route's bridged upstream carries the stored bearer, never the client's Authorization; no token in logs, /status, /metrics", async () => {
    const pin = {
      ...pinFor('remote', upstream.url, tools),
      auth: { mode: 'client', issuer: upstream.issuer },
    };
    const gateway = await startGatewayHarness([pin]);
    try {
      const client = await connectV1Client(`${gateway.url}/remote/mcp`, {
        headers: { authorization: 'Bearer the-clients-own' },
      });
      const sent = upstream.bearers.length;
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'add']);
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'served' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'served' }]);
      await client.close();
      const token = await accessToken();
      expect(upstream.bearers.slice(sent)).toEqual(upstream.bearers.slice(sent).map(() => token));
      expect(upstream.bearers).not.toContain('the-clients-own');
      expect(JSON.stringify(gateway.logs)).not.toContain(token);
      for (const path of ['/status', '/metrics']) {
        const answer = await fetch(`${gateway.running.adminUrl}${path}`);
        expect(answer.status).toBe(200);
        expect(await answer.text()).not.toContain(token);
      }
    } finally {
      await gateway.close();
    }
  });

  it('wrap: without a token the call is refused -32041 naming the server and toolpin login', async () => {
    await rm(storeFile());
    const calls = upstream.calls.length;
    const refused = await rejectionOf(
      wrap!.client.callTool({ name: 'echo', arguments: { text: 'x' } }),
      McpError,
    );
    expect(refused).toMatchObject({
      code: -32041,
      data: { reason: 'upstream_auth', server: 'remote', auth: 'login_required' },
    });
    expect(refused.message).toContain(`toolpin login ${pinFile}`);
    await eventually(() => wrap!.events('upstream.auth_refused').length > 0);
    expect(wrap!.events('upstream.auth_refused')[0]).toMatchObject({
      server: 'remote',
      reason: 'login_required',
    });
    expect(upstream.calls.length).toBe(calls);
  });
});

describe('client mode: metadata refused before its authorization server is trusted', () => {
  afterEach(() => {
    upstream.resourceMetadata.resource = upstream.url;
    upstream.resourceMetadata.authorization_servers = [upstream.issuer];
  });

  it('refuses a protected resource metadata whose resource is not upstream.url', async () => {
    upstream.resourceMetadata.resource = upstream.url.replace(/\/mcp$/, '/other');
    const grants = upstream.grants.length;
    const run = await login(pinFile);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('GW_UPSTREAM_AUTH');
    expect(run.stderr).toContain('its authorization servers are not trusted');
    expect(run.followed).toBe(0);
    expect(upstream.grants.length).toBe(grants);
  });

  it('refuses an authorization server other than the pinned issuer (drift): login and check', async () => {
    upstream.resourceMetadata.authorization_servers = ['https://other-idp.example/'];
    const run = await login(pinFile);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `the upstream now sends its users to the authorization server https://other-idp.example/, the pin records ${upstream.issuer} (drift: refused)`,
    );
    expect(run.followed).toBe(0);
    const check = await runToolpin(['check', pinFile]);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain('drift: refused');
  });
});
