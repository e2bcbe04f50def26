// `pnpm demo` (config/demo-server/run.mjs) as a person runs it: the process is the point (its exit
// code, the token it prints, Ctrl-C), so it is spawned, on free ports.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { until } from '../support/until.js';

const RUN = fileURLToPath(new URL('../../config/demo-server/run.mjs', import.meta.url));

interface Demo {
  stderr(): string;
  readonly exited: Promise<number | null>;
  signal(name: NodeJS.Signals): void;
}

function runDemo(args: readonly string[]): Demo {
  const child = spawn(process.execPath, [RUN, '--server-port', '0', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return {
    stderr: () => stderr,
    exited: new Promise((resolve) => child.once('close', resolve)),
    signal: (name) => child.kill(name),
  };
}

test('exits with the gateway code when the gateway cannot start, naming the listener and the flag', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as AddressInfo).port;
  try {
    const demo = runDemo(['--port', String(port), '--admin-port', '0']);
    expect(await demo.exited).toBe(2);
    expect(demo.stderr()).toContain(
      `the MCP listener cannot listen on 127.0.0.1:${port}: the address is in use (another process listens there); listen.port moves it (or --port <port>)`,
    );
    expect(demo.stderr()).toContain('demo: gateway exited (2); stopping');
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
}, 90_000);

test('prints an admin token of its own that signs in to a review page that can approve; Ctrl-C exits 0', async () => {
  const demo = runDemo(['--port', '0', '--admin-port', '0']);
  try {
    const admin = await until(() => /admin at (\S+)/.exec(demo.stderr())?.[1], 'the gateway to start', 2400);
    const token = /this run's admin token: (\S+)/.exec(demo.stderr())?.[1] ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const login = await fetch(`${admin}/ui/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await (await fetch(`${admin}/ui`, { headers: { cookie } })).text();
    expect(page).toContain('id="server-demo"');
    // Signed in, a write gets past the read-only rule (refused further on only for its missing form token).
    const write = await fetch(`${admin}/ui/acknowledge`, {
      method: 'POST',
      headers: { cookie, origin: admin, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'server=demo&key=tool%3Aget_weather&observed=',
    });
    expect(await write.text()).toContain('refused: the form token is missing or wrong');
  } finally {
    demo.signal('SIGINT');
  }
  expect(await demo.exited).toBe(0);
}, 90_000);
