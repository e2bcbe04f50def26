import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { digestCatalog } from '@toolpin/digest';
import { runCli } from '../../packages/gateway/dist/cli/program.js';
import { captureIo, type CapturedIo } from '../../packages/gateway/test/cli/capturedIo.js';
import { connectV1Client, defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { pinFor } from '../support/pinFor.js';
import { until } from '../support/until.js';

const FIXTURE_SERVER = fileURLToPath(new URL('../fixtures/driftingStdioServer.mjs', import.meta.url));
const FREE_PORTS = ['--port', '0', '--admin-port', '0'];

type Line = Record<string, unknown>;

/** `toolpin serve …` running in-process, as the binary runs it, with its io captured. */
interface Serving {
  readonly io: CapturedIo;
  /** The route `serve` printed for `name`. */
  route(name: string): string;
  /** stdout, as JSON log lines. */
  lines(): Line[];
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

async function serve(args: readonly string[]): Promise<Serving> {
  const io = captureIo();
  let exited: number | undefined;
  const code = runCli(['serve', ...args], io).then((value) => (exited = value));
  await until(
    () => (io.written.stderr.includes('admin at') || exited !== undefined ? true : undefined),
    'serve to print its routes',
  );
  if (exited !== undefined) throw new Error(`serve exited ${exited}: ${io.written.stderr}`);
  return {
    io,
    route: (name) => {
      const match = new RegExp(`toolpin serve: ${name} at (\\S+)`).exec(io.written.stderr);
      if (match?.[1] === undefined) throw new Error(`no route for ${name} in ${io.written.stderr}`);
      return match[1];
    },
    lines: () =>
      io.written.stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Line),
    stop: async () => {
      io.signals.emit('SIGTERM');
      return code;
    },
  };
}

async function toolNames(route: string): Promise<string[]> {
  const client = await connectV1Client(route);
  try {
    return (await client.listTools()).tools.map((tool) => tool.name).sort();
  } finally {
    await client.close();
  }
}

describe('toolpin serve for one server, without a gateway file', () => {
  let upstream: PeerHandle;
  let dir: string;

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateless-json' });
  });
  afterAll(() => upstream.close());
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-serve-one-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('serves --pin alone, prints its route and the admin URL, and reloads it when it changes', async () => {
    const pinFile = join(dir, 'demo.json');
    await writeFile(pinFile, JSON.stringify(pinFor('demo', upstream.url, defaultTools())));
    // Another pin file in the same folder is not served.
    await writeFile(join(dir, 'other.json'), JSON.stringify(pinFor('other', upstream.url, defaultTools())));
    const serving = await serve(['--pin', pinFile, ...FREE_PORTS]);
    try {
      const route = serving.route('demo');
      expect(route).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/demo\/mcp$/);
      expect(serving.io.written.stderr).toMatch(/toolpin serve: admin at http:\/\/127\.0\.0\.1:\d+ /);
      expect(serving.io.written.stderr).not.toContain('other');
      const admin = /admin at (\S+)/.exec(serving.io.written.stderr)?.[1] ?? '';
      expect((await fetch(`${admin}/readyz`)).status).toBe(200);
      expect((await fetch(route.replace('/demo/', '/other/'), { method: 'POST' })).status).toBe(404);
      expect(await toolNames(route)).toEqual(['add', 'echo', 'slow']);

      // The pin now approves add and slow only: echo is no longer served once the change is read.
      const narrowed = defaultTools().filter((tool) => tool.name !== 'echo');
      await writeFile(pinFile, JSON.stringify(pinFor('demo', upstream.url, narrowed)));
      await until(
        () => serving.lines().find((line) => line.event === 'pin.reloaded' && line.server === 'demo'),
        'the changed pin to be reloaded',
      );
      expect(await toolNames(route)).toEqual(['add', 'slow']);
      expect(serving.lines().filter((line) => line.event === 'pin.added')).toEqual([]);
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  }, 30_000);

  it('with --trust-on-first-use, writes the pin file, pins the first catalog observed, and serves that pin when run again', async () => {
    const out = join(dir, 'not', 'yet', 'demo.yaml');
    const args = ['--name', 'demo', '--url', upstream.url, '--trust-on-first-use', '--out', out];
    const first = await serve([...args, ...FREE_PORTS]);
    try {
      expect(first.io.written.stderr).toContain(`toolpin serve: ${out}: written (pin: trust-on-first-use)`);
      expect(await toolNames(first.route('demo'))).toEqual(['add', 'echo', 'slow']);
      const pinned = await until(async () => {
        const document = parse(await readFile(out, 'utf8')) as { pin: unknown };
        return typeof document.pin === 'object' ? (document.pin as { catalog: string }) : undefined;
      }, 'the observed pin to be written');
      expect(pinned.catalog).toBe(digestCatalog(defaultTools()).catalog);
    } finally {
      expect(await first.stop()).toBe(0);
    }

    const again = await serve([...args, ...FREE_PORTS]);
    try {
      expect(again.io.written.stderr).toContain(`${out}: serving the pin observed on first use`);
      expect(await toolNames(again.route('demo'))).toEqual(['add', 'echo', 'slow']);
      expect(again.lines().filter((line) => line.event === 'pin.trusted_on_first_use')).toEqual([]);
    } finally {
      expect(await again.stop()).toBe(0);
    }

    // The same --out for another upstream is refused: the pin there is another server's.
    const io = captureIo();
    const other = ['--name', 'demo', '--url', 'http://127.0.0.1:9/mcp', '--trust-on-first-use', '--out', out];
    expect(await runCli(['serve', ...other, ...FREE_PORTS], io)).toBe(2);
    expect(io.written.stderr).toBe(
      `toolpin serve: --out ${out}: already the pin file of demo (${upstream.url}): serve it with --pin, or give another --out\n`,
    );
  }, 30_000);

  it('with --command and --args, pins and serves a stdio server through the same route', async () => {
    const out = join(dir, 'stdio.yaml');
    const serving = await serve([
      '--name',
      'stdio',
      '--command',
      process.execPath,
      '--args',
      FIXTURE_SERVER,
      '--trust-on-first-use',
      '--out',
      out,
      ...FREE_PORTS,
    ]);
    try {
      expect(parse(await readFile(out, 'utf8'))).toMatchObject({
        name: 'stdio',
        upstream: { command: [process.execPath], args: [FIXTURE_SERVER] },
        pin: 'trust-on-first-use',
      });
      expect(await toolNames(serving.route('stdio'))).toEqual(['add', 'crash', 'echo', 'rug-pull', 'slow']);
      await until(
        async () =>
          typeof (parse(await readFile(out, 'utf8')) as { pin: unknown }).pin === 'object' ? true : undefined,
        'the observed pin to be written',
      );
    } finally {
      expect(await serving.stop()).toBe(0);
    }
  }, 30_000);

  it('logs for a person with --log-format pretty, and JSON lines by default when stdout is not a terminal', async () => {
    const pinFile = join(dir, 'demo.yaml');
    await writeFile(pinFile, JSON.stringify(pinFor('demo', upstream.url, defaultTools())));
    const pretty = await serve(['--pin', pinFile, '--log-format', 'pretty', ...FREE_PORTS]);
    const url = /demo at (http:\/\/[^/]+)/.exec(pretty.io.written.stderr)?.[1] ?? '';
    expect(await pretty.stop()).toBe(0);
    const lines = pretty.io.written.stdout.split('\n').filter((line) => line !== '');
    expect(lines.some((line) => line.startsWith('{'))).toBe(false);
    expect(pretty.io.written.stdout).toMatch(
      new RegExp(`^\\[[\\d:.]+\\] INFO: toolpin listening on ${url}$`, 'm'),
    );
    expect(pretty.io.written.stdout).toMatch(/^ {4}event: "gateway.started"$/m);

    const json = await serve(['--pin', pinFile, ...FREE_PORTS]);
    expect(await json.stop()).toBe(0);
    expect(json.lines().map((line) => line.event)).toEqual(
      expect.arrayContaining(['gateway.started', 'gateway.stopping']),
    );
  }, 30_000);
});

describe('toolpin serve: flags checked before anything starts', () => {
  it.each([
    [
      ['--pin', 'x.yaml', '--url', 'http://127.0.0.1:9/mcp'],
      '--pin serves one pin file alone (it names its upstream): leave out --url',
    ],
    [
      ['--pin', 'x.yaml', '--config', 'g.yaml'],
      '--pin serves one pin file alone (it names its upstream): leave out --config',
    ],
    [['--config', 'g.yaml', '--name', 'demo'], '--config serves a gateway file: leave out --name'],
    [
      ['--url', 'http://127.0.0.1:9/mcp', '--trust-on-first-use'],
      "--url needs --name <name>: the server's name, also its route",
    ],
    [
      ['--name', 'no such', '--url', 'http://127.0.0.1:9/mcp', '--trust-on-first-use'],
      '--name "no such": expected 1-64 letters, digits, "_", "." or "-", starting alphanumeric',
    ],
    [
      ['--name', 'demo', '--trust-on-first-use'],
      '--name needs exactly one of --url <url> or --command "<cmd …>"',
    ],
    [
      ['--name', 'demo', '--url', 'not-a-url', '--trust-on-first-use'],
      '--url "not-a-url": not a URL; expected an http:// or https:// URL',
    ],
    [
      ['--name', 'demo', '--url', 'http://127.0.0.1:9/mcp', '--args', 'x', '--trust-on-first-use'],
      '--args goes with --command: an --url server takes no arguments',
    ],
    [['--name', 'demo', '--command', 'node "unterminated', '--trust-on-first-use'], '--command: '],
    [
      ['--name', 'demo', '--url', 'http://127.0.0.1:9/mcp'],
      '--name demo needs --trust-on-first-use (the first catalog observed becomes the pin), or pin it first',
    ],
    [['--pin', 'x.yaml', '--log-format', 'xml'], '--log-format xml: expected json or pretty'],
    [['--pin', 'x.yaml', '--port', 'abc'], '--port abc: expected a port number from 0 to 65535'],
  ])('serve %j: exit 2, one line naming the flag', async (args, message) => {
    const io = captureIo();
    expect(await runCli(['serve', ...args], io)).toBe(2);
    expect(io.written.stderr).toContain(`toolpin serve: ${message}`);
    expect(io.written.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(io.written.stdout).toBe('');
  });

  it('names the listener whose port is taken and the flag that moves it, exit 2', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'toolpin-serve-taken-'));
    const pinFile = join(folder, 'demo.json');
    // Nothing is listed before the listeners bind: the upstream need not run.
    await writeFile(pinFile, JSON.stringify(pinFor('demo', 'http://127.0.0.1:9/mcp', defaultTools())));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    try {
      for (const [args, listener, setting, flag] of [
        [['--port', port, '--admin-port', '0'], 'the MCP listener', 'listen.port', '--port'],
        [['--port', '0', '--admin-port', port], 'the admin listener', 'admin.port', '--admin-port'],
      ] as const) {
        const io = captureIo();
        expect(await runCli(['serve', '--pin', pinFile, ...args], io)).toBe(2);
        expect(io.written.stderr).toBe(
          `toolpin: cannot start: GW_LISTEN_FAILED: ${listener} cannot listen on 127.0.0.1:${port}: the address is in use (another process listens there); ${setting} moves it (or ${flag} <port>)\n`,
        );
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('names a pin file it cannot read, on one line', async () => {
    const io = captureIo();
    expect(await runCli(['serve', '--pin', join(tmpdir(), 'toolpin-no-such-pin.yaml')], io)).toBe(2);
    expect(io.written.stderr).toMatch(
      /^toolpin: cannot start: GW_PIN_FILE_INVALID: .*toolpin-no-such-pin\.yaml.*\n$/,
    );
  });
});
