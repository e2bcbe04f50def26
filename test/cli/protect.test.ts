// `toolpin protect` / `toolpin unprotect` on a Claude Desktop config, in-process (runToolpin): two
// stdio servers (the drifting fixture and @modelcontextprotocol/server-everything, run with node
// and its resolved bin rather than npx, to stay off the network) and one HTTP server (a real SDK
// server on 127.0.0.1, routed through the managed gateway: test/cli/protectAll.test.ts runs it).
// The rewritten entry is then started as Claude would start it: a real SDK client over stdio with
// the entry's command, args and env.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { applyPatch } from 'diff';
import { parse as parseYaml } from 'yaml';
import { defaultTools, everythingStdioCommand, startV1Server, type PeerHandle } from '../peers/index.js';
import { runToolpin } from '../support/runToolpin.js';
import { FIXTURE_SERVER, TOOLPIN_CLI } from '../transports/support.js';

interface Entry {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
}

const servers = (text: string): Record<string, Entry> =>
  (JSON.parse(text) as { mcpServers: Record<string, Entry> }).mcpServers;

const oneLine = (stderr: string): string[] => stderr.trim().split('\n');

describe('toolpin protect on a Claude Desktop config', () => {
  let dir: string;
  let config: string;
  let pins: string;
  let serverDir: string;
  let original: string;
  let peer: PeerHandle;
  let dryRunPatch: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-protect-'));
    // Folders with spaces, as on macOS (~/Library/Application Support/Claude).
    await mkdir(join(dir, 'Application Support', 'Claude'), { recursive: true });
    serverDir = join(dir, 'my server');
    await mkdir(serverDir);
    config = join(dir, 'Application Support', 'Claude', 'claude_desktop_config.json');
    pins = join(dir, 'toolpin pins');
    peer = await startV1Server({ mode: 'stateful-sse', tools: defaultTools() });
    const [node, everything, stdio] = everythingStdioCommand();
    // Written by hand, compact, as people do: protect edits the entries in place.
    original = `{
  "mcpServers": {
    "weather tools": {
      "command": ${JSON.stringify(process.execPath)},
      "args": [${JSON.stringify(FIXTURE_SERVER)}, "--greeting", "hello  world"],
      "env": { "TOOLPIN_FIXTURE_CALL_LOG": "calls.log", "API_TOKEN": "\${input:token}" },
      "cwd": ${JSON.stringify(serverDir)}
    },
    "everything": { "command": ${JSON.stringify(node)}, "args": [${JSON.stringify(everything)}, "${stdio}"] },
    "remote": { "url": "${peer.url}", "headers": { "X-Api-Key": "remote-key-1" } }
  },
  "globalShortcut": "Ctrl+Space"
}
`;
    await writeFile(config, original);
  }, 20_000);

  afterAll(async () => {
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('--dry-run prints the change as a unified diff and starts or writes nothing', async () => {
    const run = await runToolpin(['protect', config, '--dir', pins, '--dry-run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`--- ${config}\toriginal`);
    expect(run.stdout).toContain(`+++ ${config}\tprotected`);
    expect(run.stdout).toContain(`-      "cwd": ${JSON.stringify(serverDir)}`);
    expect(run.stdout).toContain(`"wrap", "--pin", ${JSON.stringify(join(pins, 'weather-tools.yaml'))}]`);
    // The lines protect does not change are not in the diff: the entries are edited in place.
    expect(run.stdout).not.toContain('-  "globalShortcut"');
    expect(run.stderr).toContain('dry run: no server started, nothing written');
    expect(await readFile(config, 'utf8')).toBe(original);
    expect(existsSync(join(pins, 'weather-tools.yaml'))).toBe(false);
    expect(existsSync(`${config}.toolpin-backup`)).toBe(false);
    expect(peer.requests).toHaveLength(0);
    dryRunPatch = run.stdout;
  });

  it('pins every server, rewrites the stdio entries through toolpin wrap and keeps the original', async () => {
    const run = await runToolpin(['protect', config, '--dir', pins]);
    expect(run.code).toBe(0);
    const written = await readFile(config, 'utf8');
    const gateway = parseYaml(await readFile(join(pins, 'gateway.yaml'), 'utf8')) as {
      listen: { port: number };
    };
    // The diff shown by --dry-run is exactly the change made, but for the gateway's port: chosen
    // (once, recorded in gateway.yaml) when protect first runs.
    expect((applyPatch(original, dryRunPatch) as string).replace(':0/', `:${gateway.listen.port}/`)).toBe(
      written,
    );
    expect(await readFile(`${config}.toolpin-backup`, 'utf8')).toBe(original);
    // The pin folder is private (it holds the managed gateway's files too).
    expect((await stat(pins)).mode & 0o777).toBe(0o700);

    const after = servers(written);
    const weatherPin = join(pins, 'weather-tools.yaml');
    expect(after['weather tools']).toEqual({
      command: process.execPath,
      args: [TOOLPIN_CLI, 'wrap', '--pin', weatherPin],
      // The environment stays with the client, which passes it to wrap, which passes it on.
      env: { TOOLPIN_FIXTURE_CALL_LOG: 'calls.log', API_TOKEN: '${input:token}' },
    });
    expect(after.everything?.args).toEqual([TOOLPIN_CLI, 'wrap', '--pin', join(pins, 'everything.yaml')]);
    expect(after.remote).toEqual({
      url: `http://127.0.0.1:${gateway.listen.port}/remote/mcp`,
      headers: { 'X-Api-Key': 'remote-key-1' },
    });
    expect(JSON.parse(written).globalShortcut).toBe('Ctrl+Space');

    const weather = parseYaml(await readFile(weatherPin, 'utf8')) as { name: string; upstream: Entry };
    expect(weather.name).toBe('weather-tools');
    expect(weather.upstream).toEqual({
      command: [process.execPath],
      args: [FIXTURE_SERVER, '--greeting', 'hello  world'],
      // Names only: a pin never holds the values.
      passEnv: ['API_TOKEN', 'TOOLPIN_FIXTURE_CALL_LOG'],
      cwd: serverDir,
    });
    // The HTTP server was listed with its headers, which stay out of the pin file.
    const remotePin = await readFile(join(pins, 'http', 'remote.yaml'), 'utf8');
    expect(parseYaml(remotePin)).toMatchObject({ upstream: { url: peer.url, transport: 'streamable-http' } });
    expect(remotePin).not.toContain('remote-key-1');
    expect(peer.requests.some((request) => request.headers['x-api-key'] === 'remote-key-1')).toBe(true);
    expect(run.stderr).toContain('remote: routed through the toolpin gateway at');
    expect(run.stderr).not.toContain('remote-key-1');
  }, 30_000);

  it('the rewritten entry, started as the client starts it, lists and calls tools and refuses a drifted one', async () => {
    const entry = servers(await readFile(config, 'utf8'))['weather tools'] as Required<
      Pick<Entry, 'command' | 'args' | 'env'>
    >;
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: entry.env,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'claude-desktop-like', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
      expect((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).content).toEqual([
        { type: 'text', text: 'hi' },
      ]);
      const changed = new Promise<void>((resolve) =>
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
      );
      await client.callTool({ name: 'rug-pull', arguments: {} });
      await changed;
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('echo');
      const refused = await client.callTool({ name: 'echo', arguments: { text: 'again' } }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(McpError);
      expect((refused as McpError).code).toBe(-32040);
      expect((refused as McpError).data).toMatchObject({ reason: 'tool_drifted' });
    } finally {
      await client.close();
    }
    // The entry's env (through wrap) and the pin's cwd reached the server: its relative call log is
    // in its folder, and the refused call never got there.
    const calls = (await readFile(join(serverDir, 'calls.log'), 'utf8')).trim().split('\n');
    expect(calls.map((line) => line.split(/\s/)[0])).toEqual(['echo', 'rug-pull']);
  }, 30_000);

  it('a second protect changes nothing and starts no server', async () => {
    const before = await readFile(config, 'utf8');
    const pinBefore = await readFile(join(pins, 'everything.yaml'), 'utf8');
    const requests = peer.requests.length;
    const run = await runToolpin(['protect', config, '--dir', pins]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('nothing to change');
    expect(run.stderr).toContain('weather tools: already runs through toolpin wrap');
    expect(await readFile(config, 'utf8')).toBe(before);
    expect(await readFile(join(pins, 'everything.yaml'), 'utf8')).toBe(pinBefore);
    expect(await readFile(`${config}.toolpin-backup`, 'utf8')).toBe(original);
    expect(peer.requests).toHaveLength(requests);
  });

  it('a config the client rewrote since is merged by protect and unprotect, never refused', async () => {
    const protectedText = await readFile(config, 'utf8');
    // The client rewrites its config (a setting changed), the person rotates the key in the entry.
    const rewritten = protectedText
      .replace('Ctrl+Space', 'Ctrl+Shift+Space')
      .replace('"calls.log"', '"calls-2.log"');
    await writeFile(config, rewritten);
    const requests = peer.requests.length;
    const again = await runToolpin(['protect', config, '--dir', pins]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('changed since toolpin protect wrote it: merged');
    // Nothing re-listed: the pins are kept, the client's changes too.
    expect(peer.requests).toHaveLength(requests);
    expect(await readFile(config, 'utf8')).toBe(rewritten);

    const run = await runToolpin(['unprotect', config]);
    expect(run.code).toBe(0);
    // The original, with the client's own changes.
    expect(await readFile(config, 'utf8')).toBe(
      original.replace('Ctrl+Space', 'Ctrl+Shift+Space').replace('"calls.log"', '"calls-2.log"'),
    );
    expect(existsSync(`${config}.toolpin-backup`)).toBe(false);
    expect(existsSync(`${config}.toolpin-state.json`)).toBe(false);
  });

  it('unprotect restores the original byte for byte; protecting again keeps the pins', async () => {
    await writeFile(config, original);
    const first = await runToolpin(['protect', config, '--dir', pins]);
    expect(first.code).toBe(0);
    const run = await runToolpin(['unprotect', config]);
    expect(run.code).toBe(0);
    expect(await readFile(config)).toEqual(Buffer.from(original));
    // The pins stay: protecting again keeps them and starts no server.
    const requests = peer.requests.length;
    const reprotect = await runToolpin(['protect', config, '--dir', pins]);
    expect(reprotect.code).toBe(0);
    expect(reprotect.stderr).toContain(`weather tools: kept ${join(pins, 'weather-tools.yaml')}`);
    expect(peer.requests).toHaveLength(requests);
    // --force restores the backup over any change.
    await writeFile(config, (await readFile(config, 'utf8')).replace('Ctrl+Space', 'Alt+Space'));
    expect((await runToolpin(['unprotect', config, '--force'])).code).toBe(0);
    expect(await readFile(config, 'utf8')).toBe(original);
  });
});

describe('toolpin protect: other clients and bad input', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-protect-input-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('a VS Code mcp.json: servers rewritten, inputs left alone (dry run)', async () => {
    const file = join(dir, 'mcp.json');
    const text = `${JSON.stringify(
      {
        inputs: [{ type: 'promptString', id: 'token', description: 'API token', password: true }],
        servers: {
          fs: {
            type: 'stdio',
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem', '/my docs'],
          },
          web: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
        },
      },
      null,
      '\t',
    )}\n`;
    await writeFile(file, text);
    const run = await runToolpin([
      'protect',
      file,
      '--dir',
      join(dir, 'pins'),
      '--dry-run',
      '--toolpin-command',
      'toolpin',
    ]);
    expect(run.code).toBe(0);
    const after = JSON.parse(applyPatch(text, run.stdout) as string) as {
      inputs: unknown;
      servers: Record<string, Entry & { type?: string }>;
    };
    expect(after.inputs).toEqual(JSON.parse(text).inputs);
    expect(after.servers.fs).toEqual({
      type: 'stdio',
      command: 'toolpin',
      args: ['wrap', '--pin', join(dir, 'pins', 'fs.yaml')],
    });
    // Routed through the managed gateway (its port is chosen when protect runs: 0 in a first dry run).
    expect(after.servers.web).toEqual({ type: 'http', url: 'http://127.0.0.1:0/web/mcp' });
    expect(run.stderr).toContain('the gateway port (:0 above) is chosen when protect runs');
    expect(run.stdout).toContain('+\t\t\t"command": "toolpin",');
  });

  it('a server that cannot be started is reported and left as it was (exit 1)', async () => {
    const file = join(dir, 'claude_desktop_config.json');
    const text = '{"mcpServers":{"gone":{"command":"/nonexistent/toolpin-test-server","args":["x"]}}}';
    await writeFile(file, text);
    const run = await runToolpin(['protect', file, '--dir', join(dir, 'pins')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('gone: cannot pin it, left as it was');
    expect(await readFile(file, 'utf8')).toBe(text);
    expect(existsSync(`${file}.toolpin-backup`)).toBe(false);
  });

  // Red team: a folder that already exists (made by `toolpin pin --out ~/.toolpin/x.yaml`, or given
  // with --dir) keeps its own mode, which others may read: the pin never holds the env's values.
  it('a pin never holds the server env values, even in a folder others can read', async () => {
    const shared = join(dir, 'shared-pins');
    await mkdir(shared, { mode: 0o755 });
    const file = join(dir, 'secret_env_config.json');
    const entry = {
      command: process.execPath,
      args: [FIXTURE_SERVER],
      env: { API_KEY: 'sk-redteam-secret' },
    };
    await writeFile(file, JSON.stringify({ mcpServers: { secretive: entry } }));
    const run = await runToolpin(['protect', file, '--dir', shared]);
    expect(run.code).toBe(0);
    const pin = join(shared, 'secretive.yaml');
    expect(await readFile(pin, 'utf8')).not.toContain('sk-redteam-secret');
    expect(parseYaml(await readFile(pin, 'utf8'))).toMatchObject({ upstream: { passEnv: ['API_KEY'] } });
    expect(JSON.parse(await readFile(file, 'utf8')).mcpServers.secretive.env).toEqual({
      API_KEY: 'sk-redteam-secret',
    });
    expect(run.stderr).not.toContain('sk-redteam-secret');
  }, 20_000);

  it.each([
    ['not JSON', '{"mcpServers": {', 'not JSON'],
    ['no servers key', '{"theme": "dark"}', 'expected a JSON object with "mcpServers"'],
    [
      'an entry of unknown shape',
      '{"mcpServers": {"x": {"port": 3}}}',
      'mcpServers.x: expected either "command"',
    ],
    [
      'a url entry of unknown type',
      '{"servers": {"x": {"type": "ws", "url": "ws://h"}}}',
      'servers.x.type: "ws"',
    ],
  ])('%s: exit 2, one line naming what to fix', async (_label, text, expected) => {
    const file = join(dir, `bad-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, text);
    const run = await runToolpin(['protect', file, '--dir', join(dir, 'pins')]);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toEqual([expect.stringContaining(`toolpin protect: ${file}`)]);
    expect(run.stderr).toContain(expected);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('an unreadable config, a folder that cannot be written, no backup: exit 2, one line', async () => {
    const missing = await runToolpin(['protect', join(dir, 'missing.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read it (ENOENT)');
    const file = join(dir, 'ok.json');
    await writeFile(file, '{"mcpServers":{"x":{"command":"/nonexistent/program"}}}');
    // A folder below a regular file cannot be made, even by root.
    const run = await runToolpin(['protect', file, '--dir', join(file, 'pins')]);
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toEqual([
      expect.stringContaining(`--dir ${join(file, 'pins')}: cannot write pin files there`),
    ]);
    const restore = await runToolpin(['unprotect', file]);
    expect(restore.code).toBe(2);
    expect(oneLine(restore.stderr)).toEqual([expect.stringContaining('no backup')]);
  });
});
