import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { defaultTools } from '../peers/index.js';
import { startOAuthUpstream, type OAuthUpstream } from '../support/oauthUpstream.js';
import { pinFor } from '../support/pinFor.js';
import { rejectionOf } from '../support/rejection.js';
import { runWrapInProcess, startWrapInProcess } from '../transports/support.js';

// `toolpin wrap` of a pin in auth.mode: client with no token in the store: it runs the login
// itself where a browser can open ($BROWSER: a script that follows the authorization URL to the
// loopback redirect, as the example's authorize step redirects at once), else says what to run.

const tools = defaultTools().slice(0, 2);
const VARIABLES = ['BROWSER', 'DISPLAY', 'WAYLAND_DISPLAY', 'TOOLPIN_TOKEN_STORE'] as const;
let upstream: OAuthUpstream;
let home: string;
let pinFile: string;
const saved = new Map<string, string | undefined>();

beforeAll(async () => {
  upstream = await startOAuthUpstream(tools);
  home = await mkdtemp(join(tmpdir(), 'toolpin-wrap-login-'));
  for (const name of VARIABLES) {
    saved.set(name, process.env[name]);
    delete process.env[name];
  }
  process.env.TOOLPIN_TOKEN_STORE = join(home, 'oauth-tokens.json');
  pinFile = join(home, 'remote.json');
  const pin = { ...pinFor('remote', upstream.url, tools), auth: { mode: 'client' } };
  await writeFile(pinFile, JSON.stringify(pin, null, 2));
});

afterAll(async () => {
  for (const [name, value] of saved)
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  await upstream?.close();
  await rm(home, { recursive: true, force: true });
});

// On Linux (the CI's platform) no DISPLAY, no WAYLAND_DISPLAY and no $BROWSER: no browser can open.
const headless = process.platform === 'darwin' || process.platform === 'win32' ? test.skip : test;

headless(
  'no browser can open: stderr and the client are told exactly what to run, nothing is sent',
  async () => {
    const wrap = runWrapInProcess(pinFile, undefined);
    const client = new Client({ name: 'toolpin-wrap-test', version: '1.0.0' });
    const transport = new StdioServerTransport(wrap.stdout, wrap.stdin);
    const refused = await rejectionOf(client.connect(transport), McpError);
    expect(refused.code).toBe(-32041);
    expect(refused.message).toContain(`run: toolpin login ${pinFile}`);
    expect(wrap.events('wrap.login_required')).toEqual([
      expect.objectContaining({
        server: 'remote',
        msg: expect.stringContaining(`run: toolpin login ${pinFile}`),
      }),
    ]);
    expect(wrap.events('wrap.login')).toEqual([]);
    expect(upstream.grants).toEqual([]);
    await client.close();
    expect(await wrap.end()).toBe(0);
  },
);

test('a browser can open ($BROWSER): wrap runs the login itself, then serves the session', async () => {
  const browser = join(home, 'browser.mjs');
  await writeFile(
    browser,
    `#!${process.execPath}\nconst authorize = await fetch(process.argv[2], { redirect: 'manual' });\n` +
      `await fetch(authorize.headers.get('location'), { redirect: 'manual' });\n`,
    { mode: 0o755 },
  );
  process.env.BROWSER = browser;
  try {
    const wrap = await startWrapInProcess(pinFile, undefined);
    expect((await wrap.client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'add']);
    expect(upstream.grants).toEqual(['authorization_code']);
    expect(wrap.events('wrap.login')).toEqual([
      expect.objectContaining({ server: 'remote', msg: expect.stringContaining(`toolpin login ${pinFile}`) }),
    ]);
    expect(wrap.events('wrap.login_required')).toEqual([]);
    expect(await wrap.close()).toBe(0);
  } finally {
    delete process.env.BROWSER;
  }
});
