import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createLogger, startGateway, type RunningGateway } from '@toolpin/gateway';
import { startDemoServer } from '../../config/demo-server/server.mjs';
import { CHROMIUM_PATH } from '../../scripts/ensureChromium.mjs';
import { runCli } from '../../packages/gateway/dist/cli/program.js';
import { captureIo } from '../../packages/gateway/test/cli/capturedIo.js';
import { until } from '../support/until.js';
import { HARNESS_SETTLE_MS } from '../support/gatewayHarness.js';
import { RAW_ECHO, rawFixtureCommand, stdioPinFor, writePin } from '../transports/support.js';

// The review page (docs/review-ui.md) in a real headless Chromium, over a real gateway in front of
// the real demo MCP server: one browser launch for the file.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'review-test-token';
const WEATHER = 'tool:get_weather';
const SCREENSHOT =
  process.env.TOOLPIN_UPDATE_SCREENSHOT === '1' ? join(ROOT, 'docs', 'img', 'review-ui.png') : undefined;

type Demo = Awaited<ReturnType<typeof startDemoServer>>;
type LogLine = Record<string, unknown> & { event?: string };

interface Gateway {
  readonly running: RunningGateway;
  readonly pinFile: string;
  readonly logs: LogLine[];
}

let dir: string;
let demo: Demo;
let main: Gateway;
let browser: Browser;
let client: Client;

/** A gateway over a copy of config/servers/demo.yaml (comments and all) pointed at this demo server. */
async function startOn(name: string, admin: Record<string, unknown>): Promise<Gateway> {
  const folder = join(dir, name);
  await mkdir(join(folder, 'servers'), { recursive: true });
  const pin = (await readFile(join(ROOT, 'config', 'servers', 'demo.yaml'), 'utf8')).replace(
    'http://127.0.0.1:3001/mcp',
    demo.url,
  );
  const pinFile = join(folder, 'servers', 'demo.yaml');
  await writeFile(pinFile, pin);
  const gatewayFile = join(folder, 'gateway.yaml');
  await writeFile(
    gatewayFile,
    JSON.stringify({ listen: { port: 0 }, admin: { port: 0, ...admin }, servers: './servers' }),
  );
  const logs: LogLine[] = [];
  const logger = createLogger({
    level: 'info',
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
  });
  return { running: await startGateway(gatewayFile, { logger, settleMs: HARNESS_SETTLE_MS }), pinFile, logs };
}

async function connect(gateway: Gateway): Promise<Client> {
  const sdk = new Client({ name: 'review-test', version: '1.0.0' });
  await sdk.connect(new StreamableHTTPClientTransport(new URL(`${gateway.running.url}/demo/mcp`)));
  return sdk;
}

async function signIn(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${main.running.adminUrl}/ui`);
  await page.fill('input[name=token]', TOKEN);
  await Promise.all([page.waitForURL(/\/ui$/), page.click('button[type=submit]')]);
  return page;
}

const drift = (page: Page) => page.locator(`article.drift[data-key="${WEATHER}"]`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolpin-review-'));
  demo = await startDemoServer({ port: 0 });
  main = await startOn('main', { token: TOKEN });
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true });
  client = await connect(main);
  await client.listTools();
  await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
});

afterAll(async () => {
  await client?.close();
  await browser?.close();
  await main?.running.close();
  await demo?.close();
  await rm(dir, { recursive: true, force: true });
});

test('reads the servers and their items with JavaScript disabled', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await signIn(context);
    const server = page.locator('section.server#server-demo');
    expect(await server.getAttribute('data-state')).toBe('verified');
    expect(await server.locator('dd').allTextContents()).toEqual(
      expect.arrayContaining(['enforce', demo.url, main.pinFile]),
    );
    const add = server.locator('tr[data-key="tool:add"]');
    expect(await add.getAttribute('data-state')).toBe('verified');
    expect(await add.locator('td.n').allTextContents()).toEqual(['1', '0']);
    expect(await page.locator('#live').textContent()).toContain('JavaScript off');
  } finally {
    await context.close();
  }
});

test('shows drift live with its word diff, and approve rewrites the pin that the gateway then enforces', async () => {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  try {
    const page = await signIn(context);
    await page.locator('#live', { hasText: /^live/ }).waitFor();
    await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));
    await demo.setDrift(true);
    await client.listTools();

    await drift(page).locator('ins', { hasText: 'id_rsa' }).waitFor();
    expect(await page.evaluate(() => (globalThis as { sameDocument?: boolean }).sameDocument)).toBe(true);
    expect(await page.locator('section.server#server-demo').getAttribute('data-state')).toBe('drifted');
    expect(await drift(page).locator('mark').allTextContents()).toEqual(['description']);
    // The inserted sentence is the suspicious part: shown as a warning (amber), not as a green addition.
    const inserted = drift(page).locator('ins', { hasText: 'id_rsa' });
    expect(await inserted.getAttribute('class')).toBe('warning');
    expect(
      await inserted.evaluate(
        (node) =>
          (
            globalThis as unknown as { getComputedStyle(element: unknown): { backgroundColor: string } }
          ).getComputedStyle(node).backgroundColor,
      ),
    ).toBe('rgb(255, 225, 166)');
    await page.screenshot({ path: SCREENSHOT ?? join(dir, 'review-ui.png'), fullPage: true });

    const observed = await drift(page).locator('input[name=observed]').first().inputValue();
    const admin = main.running.adminUrl;
    const sides = await context.request.get(
      `${admin}${await drift(page).getByText('side by side').getAttribute('href')}`,
    );
    const sidesHtml = await sides.text();
    expect(sidesHtml).toContain('<h3>observed</h3>');
    expect(sidesHtml).toMatch(
      /<td><code>\/description<\/code><\/td>.*temperature, sky and wind\.&quot;<\/pre>/s,
    );
    const patch = await context.request.get(
      `${admin}${await drift(page).getByText('Download patch').getAttribute('href')}`,
    );
    expect(patch.headers()['content-disposition']).toBe('attachment; filename="demo-get_weather.patch"');
    expect(await patch.text()).toContain(`+    ${WEATHER}: ${observed}\n`);
    await Promise.all([
      page.waitForURL(/notice=approved/),
      drift(page).locator('button[value=approve]').click(),
    ]);
    expect(await readFile(main.pinFile, 'utf8')).toContain(`${WEATHER}: ${observed}`);
    expect(main.running.gateway.routes.get('demo')?.guard.config.pin.tools[WEATHER]).toBe(observed);
    expect(main.logs.some((line) => line.event === 'review.approved')).toBe(true);
    // No client listed since: the drift is shown approved, with nothing left to press.
    expect(await drift(page).locator('p.approved').textContent()).toBe(
      'approved, waiting for the next listing',
    );
    expect(await drift(page).locator('button').count()).toBe(0);
    const sdk = await connect(main);
    try {
      expect((await sdk.listTools()).tools.map((tool) => tool.name)).toContain('get_weather');
      // The next listing verifies it: the live page drops the drift.
      await drift(page).waitFor({ state: 'detached' });
      const result = await sdk.callTool({ name: 'get_weather', arguments: { city: 'Paris' } });
      expect(result.isError).not.toBe(true);
    } finally {
      await sdk.close();
    }
  } finally {
    await context.close();
  }
});

test('keep blocked acknowledges the drift: the tool stays refused and its alert is not sent again', async () => {
  const context = await browser.newContext();
  try {
    const page = await signIn(context);
    await page.locator('#live', { hasText: /^live/ }).waitFor();
    // The pin now holds the poisoned text; the server going back is drift too.
    await demo.setDrift(false);
    await client.listTools();
    await drift(page).locator('button[value=keep-blocked]').waitFor();
    await Promise.all([
      page.waitForURL(/notice=kept-blocked/),
      drift(page).locator('button[value=keep-blocked]').click(),
    ]);
    expect(await drift(page).textContent()).toContain('kept blocked');
    await client.listTools();
    const last = main.logs.filter((line) => line.event === 'catalog.drift').at(-1);
    expect(main.running.observer.acknowledgements.covers(last as never)).toBe(true);
    await expect(
      client.callTool({ name: 'get_weather', arguments: { city: 'Paris' } }),
    ).rejects.toMatchObject({
      code: -32040,
    });
  } finally {
    await context.close();
  }
});

test('refuses writes without the token, without the form token, and from another site', async () => {
  const admin = main.running.adminUrl;
  const form = 'server=demo&key=tool%3Aget_weather&observed=x';
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${admin}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    });
  expect((await post('/ui/approve', form)).status).toBe(401);
  expect((await post('/ui/login', 'token=wrong')).status).toBe(401);
  expect((await post('/ui/login', `token=${TOKEN}`, { origin: 'http://evil.example' })).status).toBe(403);
  const login = await post('/ui/login', `token=${TOKEN}`);
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  expect(cookie).toMatch(/^toolpin_review=/);
  const page = await (await fetch(`${admin}/ui`, { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  expect(csrf).not.toBe('');
  expect((await post('/ui/acknowledge', form, { cookie })).status).toBe(403);
  expect(
    (await post('/ui/acknowledge', `${form}&csrf=${csrf}`, { cookie, origin: 'http://evil.example' })).status,
  ).toBe(403);
  expect(
    (await post('/ui/acknowledge', `${form}&csrf=${csrf}`, { cookie, 'sec-fetch-site': 'cross-site' }))
      .status,
  ).toBe(403);
  // The same request from the page's own origin gets past the checks (and finds no such drift).
  expect((await post('/ui/acknowledge', `${form}&csrf=${csrf}`, { cookie, origin: admin })).status).toBe(409);
});

test('admin.ui readonly and a tokenless admin show the drift without actions and refuse writes', async () => {
  const readonly = await startOn('readonly', { token: TOKEN, ui: 'readonly' });
  const tokenless = await startOn('tokenless', {});
  try {
    await demo.setDrift(true);
    for (const gateway of [readonly, tokenless]) {
      const sdk = await connect(gateway);
      await sdk.listTools();
      await sdk.close();
    }
    const cases = [
      { gateway: readonly, headers: { authorization: `Bearer ${TOKEN}` }, why: 'admin.ui is readonly' },
      {
        gateway: tokenless,
        headers: {},
        // The note says where the token is set, not only that it is missing.
        why: 'no admin.token is configured, and the page writes pins only for a reader who gave the token. To approve here, set admin: { token: … } in the gateway file',
      },
    ];
    for (const { gateway, headers, why } of cases) {
      const admin = gateway.running.adminUrl;
      const page = await (await fetch(`${admin}/ui`, { headers })).text();
      expect(page).toContain('id_rsa');
      expect(page).toContain(why);
      expect(page).not.toContain('action="/ui/approve"');
      const approve = await fetch(`${admin}/ui/approve`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'server=demo&key=tool%3Aget_weather&observed=x',
      });
      expect(approve.status).toBe(403);
    }
  } finally {
    await readonly.running.close();
    await tokenless.running.close();
  }
});

// `toolpin review`: no gateway, the servers run through `wrap`; the command lists the pins of a
// folder itself (an HTTP server and a stdio one here) and serves the same page, signed in by the
// one-time link it hands the browser ($BROWSER: a script that records it, for Chromium to open).
test('toolpin review lists a folder of pins live, opens the page signed in, and approves a drift through it', async () => {
  const folder = join(dir, 'desk');
  await mkdir(folder);
  const pinFile = join(folder, 'demo.yaml');
  await writeFile(
    pinFile,
    (await readFile(join(ROOT, 'config', 'servers', 'demo.yaml'), 'utf8')).replace(
      'http://127.0.0.1:3001/mcp',
      demo.url,
    ),
  );
  await writePin(folder, stdioPinFor('local', rawFixtureCommand(), [RAW_ECHO]));
  await demo.setDrift(true);
  const opened = join(dir, 'opened.txt');
  const browserScript = join(dir, 'browser.sh');
  await writeFile(browserScript, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`, { mode: 0o755 });
  const before = process.env.BROWSER;
  process.env.BROWSER = browserScript;
  const io = captureIo();
  const exited = runCli(['review', '--dir', folder], io);
  const context = await browser.newContext();
  try {
    const link = await until(
      () => readFile(opened, 'utf8').catch(() => undefined),
      'the browser to be opened',
    );
    expect(io.written.stderr).toContain(`toolpin review: 2 server(s) from ${folder}\n`);
    expect(io.written.stderr).toContain(`this link signs a browser in once: ${link}\n`);
    const page = await context.newPage();
    await page.goto(link);
    expect(new URL(page.url()).pathname).toBe('/ui');
    expect(await page.locator('section.server#server-local').getAttribute('data-state')).toBe('verified');
    expect(await page.locator('section.server#server-demo').getAttribute('data-state')).toBe('drifted');
    await drift(page).locator('ins', { hasText: 'id_rsa' }).waitFor();
    const observed = await drift(page).locator('input[name=observed]').first().inputValue();
    await Promise.all([
      page.waitForURL(/notice=approved/),
      drift(page).locator('button[value=approve]').click(),
    ]);
    expect(await readFile(pinFile, 'utf8')).toContain(`${WEATHER}: ${observed}`);
    // Listed again after the approval: verified at once, nothing left to approve.
    expect(await page.locator('section.server#server-demo').getAttribute('data-state')).toBe('verified');
    expect(await drift(page).count()).toBe(0);
    // The link signed in once: used again, it signs nobody in.
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(401);
  } finally {
    await context.close();
    if (before === undefined) delete process.env.BROWSER;
    else process.env.BROWSER = before;
    io.signals.emit('SIGINT');
  }
  expect(await exited).toBe(0);
});
