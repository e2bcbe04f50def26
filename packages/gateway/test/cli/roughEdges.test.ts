import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveServeSource } from '../../src/cli/serveSource.js';
import { CLIENT_INFO } from '../../src/defaults.js';
import { fixture, runCli } from './runCli.js';

// Bad flags end in one line naming the flag and exit 2, before anything is listed or started.
describe('CLI flags checked before anything runs', () => {
  it.each([
    // The person's own typo is echoed as typed: nothing in it is a credential to hide.
    [
      ['pin', '--url', 'notaurl', '--name', 'x'],
      'toolpin pin: --url "notaurl": not a URL; expected an http:// or https:// URL',
    ],
    [['pin', '--url', 'ftp://u:secret@host/mcp', '--name', 'x'], 'expected an http:// or https:// URL'],
    [['pin', '--from-file', 'catalog.json', '--upstream', 'nope', '--name', 'x'], 'toolpin pin: --upstream '],
    // Refused before the command is started (it would fail to start, with another message).
    [
      ['pin', '--command', 'node never-started.mjs', '--name', 'bad name'],
      'toolpin pin: --name "bad name": expected',
    ],
    [['serve', '--port', 'abc'], 'toolpin serve: --port abc: expected a port number from 0 to 65535'],
    [['serve', '--port', '8080', '--admin-port', '70000'], '--admin-port 70000: expected a port number'],
  ])('toolpin %j exits 2 with one line naming the flag', async (args, expected) => {
    const run = await runCli(...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(expected);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toContain('secret');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).toBe('');
  });
});

describe('files the CLI writes and reads', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-rough-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('pin --out creates the folder of the pin file', async () => {
    const out = join(dir, 'new', 'folder', 'deepwiki.yaml');
    const run = await runCli(
      'pin',
      '--from-file',
      fixture('deepwiki-tools-list.json'),
      '--upstream',
      'https://mcp.example/mcp',
      '--name',
      'deepwiki',
      '--out',
      out,
    );
    expect(run.code).toBe(0);
    expect(await readFile(out, 'utf8')).toContain('name: deepwiki');
  });

  it.each([
    ['a credential parameter', 'query.yaml', 'https://mcp.example/mcp?api_key=k-123'],
    ['userinfo', 'userinfo.yaml', 'https://user:pw-123@mcp.example/mcp'],
  ])('pin --out writes a pin whose upstream URL carries %s owner-only (0600)', async (_what, file, url) => {
    const out = join(dir, file);
    const run = await runCli(
      'pin',
      '--from-file',
      fixture('deepwiki-tools-list.json'),
      '--upstream',
      url,
      '--name',
      'deepwiki',
      '--out',
      out,
    );
    expect(run.code).toBe(0);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
  });

  it('serve --name writes a first-use pin whose URL carries credentials owner-only (0600)', async () => {
    const out = join(dir, 'first-use', 'remote.yaml');
    await resolveServeSource(
      { name: 'remote', url: 'https://mcp.example/mcp?token=t-123', out },
      () => undefined,
    );
    expect((await stat(out)).mode & 0o777).toBe(0o600);
  });

  it('check --json says unknown on stdout for a pin file it cannot read', async () => {
    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'name: x\nupstream: [not, a, mapping]\n');
    const run = await runCli('check', broken, '--json');
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'unknown', file: broken });
    expect(run.stderr).toContain('toolpin check:');
  });
});

// `--version` registers no command (program.ts commandsFor); help still lists them all.
describe('toolpin --version and --help', () => {
  it.each([['--version'], ['-V']])('%s prints the version of the gateway package, exit 0', async (flag) => {
    expect(await runCli(flag)).toEqual({ code: 0, stdout: `${CLIENT_INFO.version}\n`, stderr: '' });
  });

  it('--help lists every command', async () => {
    const run = await runCli('--help');
    expect(run.code).toBe(0);
    const commands = run.stdout.slice(run.stdout.indexOf('Commands:'));
    const listed = [...commands.matchAll(/^ {2}([a-z]+) /gm)].map(([, name]) => name);
    expect(listed).toEqual([
      'digest',
      'key',
      'diff',
      'serve',
      'pin',
      'check',
      'approve',
      'verify',
      'manifest',
      'review',
      'wrap',
      'login',
      'protect',
      'unprotect',
      'up',
      'down',
      'help',
    ]);
  });
});
