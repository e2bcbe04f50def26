// How protect reads client configs and plans their rewrite, in-process and without starting a
// server (--dry-run, and the pure helpers). The whole protect / wrap / unprotect round trip, with
// real servers, is test/cli/protect.test.ts.
import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatch } from 'diff';
import { parseClientConfig, wrappedPin } from '../../src/cli/clientConfig.js';
import { clientConfigPaths } from '../../src/cli/clientConfigFiles.js';
import { duplicateMember, rewriteEntry } from '../../src/cli/clientConfigText.js';
import { unprotectedText } from '../../src/cli/protectState.js';
import { pinNameOf } from '../../src/cli/protectCommand.js';
import { runCli } from './runCli.js';

const SCRIPT = '/opt/toolpin/packages/gateway/dist/cli/main.js';

describe('client configs', () => {
  it('recognizes an entry already running through toolpin wrap, by any launcher of toolpin', () => {
    expect(wrappedPin('toolpin', ['wrap', '--pin', '/p/a.yaml'], SCRIPT)).toBe('/p/a.yaml');
    expect(wrappedPin('C:\\npm\\toolpin.cmd', ['wrap', '--pin', '/p/a.yaml'], SCRIPT)).toBe('/p/a.yaml');
    expect(wrappedPin('/usr/bin/node', [SCRIPT, 'wrap', '--pin', '/p/a.yaml'], SCRIPT)).toBe('/p/a.yaml');
    expect(
      wrappedPin(
        '/usr/bin/node',
        ['/usr/lib/node_modules/@toolpin/gateway/dist/cli/main.js', 'wrap', '--pin', '/p/x.yaml'],
        SCRIPT,
      ),
    ).toBe('/p/x.yaml');
    // wrap's own form with the server after "--" (README, by hand): wrap is still at its place.
    expect(wrappedPin('toolpin', ['wrap', '--pin', '/p/a.yaml', '--', 'npx', 'srv'], SCRIPT)).toBe(
      '/p/a.yaml',
    );
    // Another program with a `wrap --pin` in its arguments is a server like any other.
    expect(wrappedPin('/usr/bin/node', ['/srv/other.js', 'wrap', '--pin', 'x'], SCRIPT)).toBeUndefined();
    expect(wrappedPin('toolpin', ['serve', '--pin', 'x'], SCRIPT)).toBeUndefined();
  });

  it('recognizes only the shape protect writes, never "toolpin" and "wrap" somewhere in the arguments', () => {
    // A server's own install snippet can carry these words: the server runs, toolpin never does.
    expect(
      wrappedPin('npx', ['-y', 'evil-mcp', 'toolpin', 'wrap', '--pin', '/p/a.yaml'], SCRIPT),
    ).toBeUndefined();
    expect(
      wrappedPin('sh', ['-c', 'evil-mcp', 'toolpin', 'wrap', '--pin', '/p/a.yaml'], SCRIPT),
    ).toBeUndefined();
    expect(
      wrappedPin('/usr/bin/node', ['/srv/evil.js', SCRIPT, 'wrap', '--pin', '/p/a.yaml'], SCRIPT),
    ).toBeUndefined();
    // Anything between the launcher and wrap, or after the pin but "--", is not protect's entry.
    expect(wrappedPin('toolpin', ['--evil', 'wrap', '--pin', '/p/a.yaml'], SCRIPT)).toBeUndefined();
    expect(wrappedPin('toolpin', ['wrap', '--pin', '/p/a.yaml', '--evil'], SCRIPT)).toBeUndefined();
    expect(wrappedPin('toolpin', ['wrap', '--pin', '/p/a.yaml', '--'], SCRIPT)).toBeUndefined();
    // A pin path relative to wherever the client starts (a repository's own file) is not one protect wrote.
    expect(wrappedPin('toolpin', ['wrap', '--pin', 'pins/a.yaml'], SCRIPT)).toBeUndefined();
    // node running a script that is not toolpin's, or toolpin's script not run by node.
    expect(wrappedPin('/usr/bin/python3', [SCRIPT, 'wrap', '--pin', '/p/a.yaml'], SCRIPT)).toBeUndefined();
    expect(
      wrappedPin('/usr/bin/node', ['gateway/dist/cli/main.js', 'wrap', '--pin', '/p/a.yaml'], SCRIPT),
    ).toBeUndefined();
  });

  it('reads stdio, url and wrapped entries; names what to fix in one of unknown shape', () => {
    const config = parseClientConfig(
      JSON.stringify({
        mcpServers: {
          a: { command: 'npx', args: ['-y', 'pkg'], env: { K: 'v' }, cwd: '/w' },
          b: { url: 'https://h/mcp', headers: { Authorization: 'Bearer t' } },
          c: { type: 'sse', url: 'https://h/sse' },
          d: { command: 'toolpin', args: ['wrap', '--pin', '/p/d.yaml'] },
        },
      }),
      'cfg.json',
      SCRIPT,
    );
    expect(config.key).toBe('mcpServers');
    expect(config.servers.map((server) => [server.name, server.kind])).toEqual([
      ['a', 'stdio'],
      ['b', 'http'],
      ['c', 'http'],
      ['d', 'wrapped'],
    ]);
    expect(config.servers[2]).toMatchObject({
      http: { url: 'https://h/sse', transport: 'sse', headers: {} },
    });
    expect(() =>
      parseClientConfig('{"servers":{"x":{"command":"a","args":"b c"}}}', 'cfg.json', SCRIPT),
    ).toThrow('cfg.json: servers.x.args: expected an array of strings');
    expect(() =>
      parseClientConfig('{"servers":{"x":{"command":"a","env":{"N":1}}}}', 'cfg.json', SCRIPT),
    ).toThrow('servers.x.env: expected an object of strings');
    expect(() =>
      parseClientConfig('{"servers":{"x":{"type":"http","command":"a"}}}', 'cfg.json', SCRIPT),
    ).toThrow('servers.x.type: "http" with "command"');
  });

  it('edits an entry in place: its other members, the other entries and comments keep their text', () => {
    const text =
      '{\r\n\t// mine\r\n\t"servers": {\r\n\t\t"a": {"command": "x", "args": ["1"], "cwd": "/w"},\r\n\t\t"b":   {"url": "http://h/mcp"}\r\n\t}\r\n}\r\n';
    const before = { command: 'x', args: ['1'], cwd: '/w' };
    const after = { command: 'toolpin', args: ['wrap', '--pin', '/p/a.yaml'] };
    expect(rewriteEntry(text, 'servers', 'a', before, after)).toBe(
      '{\r\n\t// mine\r\n\t"servers": {\r\n\t\t"a": {"command": "toolpin", "args": ["wrap", "--pin", "/p/a.yaml"]},\r\n\t\t"b":   {"url": "http://h/mcp"}\r\n\t}\r\n}\r\n',
    );
  });

  it('refuses a config naming a member twice (JSON.parse reads the last, an edit would land on the first)', () => {
    expect(duplicateMember('{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}')).toBe('a');
    expect(duplicateMember('{"servers": {"a": {"command": "x", "command": "y"}}}')).toBe('command');
    expect(duplicateMember('{"servers": {"a": {"command": "x"}, "b": {"command": "x"}}}')).toBeUndefined();
  });

  it('undoes protect in a config the client rewrote: its changes and a rotated key kept', () => {
    const original = '{"mcpServers": {"a": {"command": "srv", "env": {"K": "old"}}}, "theme": "dark"}';
    const written = { command: 'toolpin', args: ['wrap', '--pin', '/p/a.yaml'], env: { K: 'old' } };
    // Claude rewrote the file in its own layout; the person rotated the key.
    const current = JSON.stringify(
      { mcpServers: { a: { ...written, env: { K: 'new' } } }, theme: 'light' },
      null,
      2,
    );
    const undone = unprotectedText(current, original, 'mcpServers', new Map([['a', written]]), []);
    expect(undone.left).toEqual([]);
    expect(JSON.parse(undone.text)).toEqual({
      mcpServers: { a: { command: 'srv', env: { K: 'new' } } },
      theme: 'light',
    });
    // An entry whose wrapping was changed by hand is left as it is, and named.
    const edited = current.replace('/p/a.yaml', '/p/other.yaml');
    const left = unprotectedText(edited, original, 'mcpServers', new Map([['a', written]]), []);
    expect(left).toEqual({ text: edited, left: ['a'] });
  });

  it('names pins with letters, digits, "_", "." and "-", starting alphanumeric', () => {
    expect(pinNameOf('weather tools')).toBe('weather-tools');
    expect(pinNameOf('@scope/server: v2!')).toBe('scope-server-v2');
    expect(pinNameOf('../../etc/passwd')).toBe('etc-passwd');
    expect(pinNameOf('天気')).toBe('server');
    expect(pinNameOf('x'.repeat(100))).toHaveLength(56);
  });
});

describe('where each client keeps its config', () => {
  it('knows the usual paths on Linux, macOS and Windows', () => {
    const linux = { platform: 'linux' as const, env: {}, home: '/home/me' };
    const mac = { platform: 'darwin' as const, env: {}, home: '/Users/me' };
    const windows = {
      platform: 'win32' as const,
      env: { APPDATA: 'C:\\Users\\me\\AppData\\Roaming', USERPROFILE: 'C:\\Users\\me' },
      home: 'C:\\Users\\me',
    };
    expect(clientConfigPaths('claude', mac)).toEqual([
      '/Users/me/Library/Application Support/Claude/claude_desktop_config.json',
    ]);
    expect(clientConfigPaths('claude', windows)[0]).toBe(
      'C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    );
    expect(clientConfigPaths('claude', linux)).toEqual([
      '/home/me/.config/Claude/claude_desktop_config.json',
    ]);
    expect(clientConfigPaths('cursor', linux)).toEqual(['/home/me/.cursor/mcp.json']);
    expect(clientConfigPaths('cursor', windows)).toEqual(['C:\\Users\\me\\.cursor\\mcp.json']);
    expect(clientConfigPaths('vscode', mac)[0]).toBe(
      '/Users/me/Library/Application Support/Code/User/mcp.json',
    );
    expect(clientConfigPaths('vscode', windows)[0]).toBe(
      'C:\\Users\\me\\AppData\\Roaming\\Code\\User\\mcp.json',
    );
    expect(clientConfigPaths('vscode', { ...linux, env: { XDG_CONFIG_HOME: '/xdg' } })[0]).toBe(
      '/xdg/Code/User/mcp.json',
    );
  });
});

describe('toolpin protect --dry-run', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-protect-plan-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('gives every server its own pin file, never one that pins another server', async () => {
    const pins = join(dir, 'pins');
    await mkdir(pins);
    // A pin of another server already holds the first name.
    await writeFile(
      join(pins, 'a-b.yaml'),
      'name: a-b\nupstream: { url: "https://other.example/mcp" }\npin: { catalog: "sha256:' +
        '0'.repeat(64) +
        '", tools: {} }\n',
    );
    const config = join(dir, 'claude_desktop_config.json');
    const text = JSON.stringify({
      mcpServers: {
        'a b': { command: 'npx', args: ['-y', 'a'] },
        'a-b': { command: 'npx', args: ['-y', 'b'] },
        'a/b': { command: 'npx', args: ['-y', 'c'] },
      },
    });
    await writeFile(config, text);
    const run = await runCli('protect', config, '--dir', pins, '--dry-run', '--toolpin-command', 'toolpin');
    expect(run.code).toBe(0);
    const after = JSON.parse(applyPatch(text, run.stdout) as string) as {
      mcpServers: Record<string, { args: string[] }>;
    };
    expect(Object.values(after.mcpServers).map((entry) => entry.args[2])).toEqual([
      join(pins, 'a-b-2.yaml'),
      join(pins, 'a-b-3.yaml'),
      join(pins, 'a-b-4.yaml'),
    ]);
    expect(await readFile(config, 'utf8')).toBe(text);
  });

  it('leaves a server whose command line holds a client variable as it was (exit 1)', async () => {
    const config = join(dir, 'vscode-mcp.json');
    const text = JSON.stringify({
      servers: { local: { type: 'stdio', command: 'node', args: ['${workspaceFolder}/server.js'] } },
    });
    await writeFile(config, text);
    const dry = await runCli('protect', config, '--dir', join(dir, 'pins'), '--dry-run');
    expect(dry).toMatchObject({ code: 0, stdout: '' });
    expect(dry.stderr).toContain('local: would leave it as it was: its command or args use a variable');
    const run = await runCli('protect', config, '--dir', join(dir, 'pins'));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('local: left as it was');
    expect(await readFile(config, 'utf8')).toBe(text);
  });

  it('pins and wraps an entry whose arguments merely contain "toolpin wrap --pin"', async () => {
    const config = join(dir, 'snippet-mcp.json');
    const text = JSON.stringify({
      mcpServers: {
        evil: { command: 'npx', args: ['-y', 'evil-mcp', 'toolpin', 'wrap', '--pin', '/p/a.yaml'] },
      },
    });
    await writeFile(config, text);
    const pins = join(dir, 'snippet-pins');
    const run = await runCli('protect', config, '--dir', pins, '--dry-run', '--toolpin-command', 'toolpin');
    expect(run.code).toBe(0);
    expect(run.stderr).not.toContain('already runs through toolpin wrap');
    expect(run.stderr).toContain(`evil: would pin it to ${join(pins, 'evil.yaml')}`);
    const after = JSON.parse(applyPatch(text, run.stdout) as string) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    expect(after.mcpServers.evil).toEqual({
      command: 'toolpin',
      args: ['wrap', '--pin', join(pins, 'evil.yaml')],
    });
  });

  it('follows a symlinked config: the link stays a link, the backup lands beside the real file', async () => {
    const pins = join(dir, 'kept');
    await mkdir(pins);
    // A pin of this very server is kept: protect starts nothing.
    await writeFile(
      join(pins, 'notes.yaml'),
      'name: notes\nupstream: { command: npx, args: [-y, notes-mcp] }\npin: trust-on-first-use\n',
    );
    const real = join(dir, 'dotfiles', 'mcp.json');
    await mkdir(join(dir, 'dotfiles'));
    const text = '{"servers": {"notes": {"command": "npx", "args": ["-y", "notes-mcp"]}}}\n';
    await writeFile(real, text);
    const link = join(dir, 'linked-mcp.json');
    await symlink(real, link);
    const run = await runCli('protect', link, '--dir', pins, '--toolpin-command', 'toolpin');
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`notes: kept ${join(pins, 'notes.yaml')}`);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(link, 'utf8'))).toEqual({
      servers: { notes: { command: 'toolpin', args: ['wrap', '--pin', join(pins, 'notes.yaml')] } },
    });
    expect(await readFile(`${real}.toolpin-backup`, 'utf8')).toBe(text);
    expect((await runCli('unprotect', link)).code).toBe(0);
    expect(await readFile(real, 'utf8')).toBe(text);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
  });

  describe('the files beside the config are never written or read through a symlink', () => {
    // A config whose one server already has its pin (kept: protect starts nothing) and a file a
    // repository's link could point at (~/.bashrc in the attack).
    async function setUp(
      name: string,
    ): Promise<{ config: string; text: string; pins: string; target: string }> {
      const folder = join(dir, name);
      const pins = join(folder, 'pins');
      await mkdir(pins, { recursive: true });
      await writeFile(
        join(pins, 'notes.yaml'),
        'name: notes\nupstream: { command: npx, args: [-y, notes-mcp] }\npin: trust-on-first-use\n',
      );
      const config = join(folder, 'mcp.json');
      const text = '{"servers": {"notes": {"command": "npx", "args": ["-y", "notes-mcp"]}}}\n';
      await writeFile(config, text);
      const target = join(folder, 'bashrc');
      await writeFile(target, 'export PATH=/usr/bin\n');
      return { config, text, pins, target };
    }

    it.each([
      ['the state file', '.toolpin-state.json'],
      ['the backup', '.toolpin-backup'],
    ])(
      'protect refuses %s as a symlink (exit 2): nothing written, the link target untouched',
      async (_what, suffix) => {
        const { config, text, pins, target } = await setUp(`link${suffix}`);
        await symlink(target, `${config}${suffix}`);
        const run = await runCli('protect', config, '--dir', pins, '--toolpin-command', 'toolpin');
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(`${config}${suffix}: a symlink`);
        expect(run.stderr.trim().split('\n')).toHaveLength(1);
        expect(await readFile(target, 'utf8')).toBe('export PATH=/usr/bin\n');
        expect(await readFile(config, 'utf8')).toBe(text);
        expect((await lstat(`${config}${suffix}`)).isSymbolicLink()).toBe(true);
      },
    );

    it('protect refuses a dangling state-file symlink too (it would create the file it points at)', async () => {
      const { config, text, pins } = await setUp('dangling');
      const target = join(dir, 'dangling', 'created-by-link');
      await symlink(target, `${config}.toolpin-state.json`);
      const run = await runCli('protect', config, '--dir', pins, '--toolpin-command', 'toolpin');
      expect(run.code).toBe(2);
      expect(await readFile(config, 'utf8')).toBe(text);
      await expect(lstat(target)).rejects.toThrow('ENOENT');
    });

    it('writes the state file as a regular file of its own', async () => {
      const { config, pins } = await setUp('regular');
      const run = await runCli('protect', config, '--dir', pins, '--toolpin-command', 'toolpin');
      expect(run.code).toBe(0);
      const state = await lstat(`${config}.toolpin-state.json`);
      expect(state.isFile()).toBe(true);
      expect(JSON.parse(await readFile(`${config}.toolpin-state.json`, 'utf8'))).toEqual({
        protected: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        // Each entry as protect wrote it, so a config the client rewrites later is merged.
        entries: { notes: { command: 'toolpin', args: ['wrap', '--pin', join(pins, 'notes.yaml')] } },
      });
      // Owner-only: an entry can hold env values.
      expect(state.mode & 0o077).toBe(0);
    });

    it('unprotect never restores a backup that is a symlink (the file it points at would land in the config)', async () => {
      const { config, text, target } = await setUp('unprotect');
      await writeFile(target, 'SECRET=hunter2\n');
      await symlink(target, `${config}.toolpin-backup`);
      const run = await runCli('unprotect', config, '--force');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`${config}.toolpin-backup: a symlink`);
      expect(await readFile(config, 'utf8')).toBe(text);
    });
  });
});

describe('a config protected by an earlier toolpin (env values in the pin)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-protect-migrate-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('moves the values back into the entry and leaves their names in the pin; unprotect still restores', async () => {
    const pins = join(dir, 'pins');
    await mkdir(pins);
    const pin = join(pins, 'notes.yaml');
    // What protect wrote before: the key copied out of the client config into the pin.
    const pinText =
      'name: notes\nupstream:\n  command: [npx]\n  args: [-y, notes-mcp]\n  env:\n    NOTES_KEY: sk-old-1\n' +
      'pin: trust-on-first-use\n';
    await writeFile(pin, pinText);
    const config = join(dir, 'claude_desktop_config.json');
    const original =
      '{"mcpServers": {"notes": {"command": "npx", "args": ["-y", "notes-mcp"], "env": {"NOTES_KEY": "sk-old-1"}}}}\n';
    const protectedText = `{"mcpServers": {"notes": {"command": "toolpin", "args": ["wrap", "--pin", ${JSON.stringify(pin)}]}}}\n`;
    await writeFile(`${config}.toolpin-backup`, original);
    await writeFile(config, protectedText);
    // An earlier state file: the digest only.
    const { createHash } = await import('node:crypto');
    const digest = `sha256:${createHash('sha256').update(protectedText).digest('hex')}`;
    await writeFile(`${config}.toolpin-state.json`, JSON.stringify({ protected: digest }));

    const run = await runCli('protect', config, '--dir', pins, '--toolpin-command', 'toolpin');
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('notes: its env values moved from');
    expect(run.stderr).not.toContain('sk-old-1');
    const entry = (JSON.parse(await readFile(config, 'utf8')) as { mcpServers: Record<string, unknown> })
      .mcpServers.notes;
    expect(entry).toEqual({
      command: 'toolpin',
      args: ['wrap', '--pin', pin],
      env: { NOTES_KEY: 'sk-old-1' },
    });
    const migrated = await readFile(pin, 'utf8');
    expect(migrated).not.toContain('sk-old-1');
    expect(migrated).toContain('passEnv:\n    - NOTES_KEY\n');
    expect(migrated).toContain('pin: trust-on-first-use\n');

    const restore = await runCli('unprotect', config);
    expect(restore.code).toBe(0);
    expect(await readFile(config, 'utf8')).toBe(original);
  });
});
