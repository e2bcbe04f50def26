// `toolpin up --service print|install` and what `toolpin up` / `down` say without a gateway to run,
// in-process. The gateway running in the background, reached by a real client, is
// test/cli/protectAll.test.ts.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { runCli } from './runCli.js';

describe('toolpin up --service', () => {
  let dir: string;
  const saved = process.env.XDG_CONFIG_HOME;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin up-'));
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved;
    await rm(dir, { recursive: true, force: true });
  });

  it('prints a systemd user unit running this toolpin on the recorded loopback ports', async () => {
    const pins = join(dir, 'pins %h');
    const run = await runCli('up', '--dir', pins, '--service', 'print', '--service-manager', 'systemd');
    expect(run.code).toBe(0);
    const gateway = parseYaml(await readFile(join(pins, 'gateway.yaml'), 'utf8')) as {
      listen: { host: string; port: number };
      admin: { host: string; port: number };
      servers: string;
    };
    expect(gateway).toMatchObject({
      listen: { host: '127.0.0.1' },
      admin: { host: '127.0.0.1' },
      servers: './http',
    });
    expect(gateway.listen.port).not.toBe(gateway.admin.port);
    // systemd's quoting: every word quoted, `%` doubled so `%h` is not a specifier.
    const config = JSON.stringify(join(dir, 'pins %%h', 'gateway.yaml'));
    expect(run.stdout).toContain(`ExecStart=${JSON.stringify(process.execPath)} `);
    expect(run.stdout).toContain(` "serve" "--config" ${config} "--log-format" "json"\n`);
    expect(run.stdout).toContain('WantedBy=default.target');
    // The ports were chosen once: a second run keeps them.
    await runCli('up', '--dir', pins, '--service', 'print', '--service-manager', 'launchd');
    expect(parseYaml(await readFile(join(pins, 'gateway.yaml'), 'utf8'))).toEqual(gateway);
  });

  it('prints a launchd agent with its arguments escaped', async () => {
    const pins = join(dir, 'a&b');
    const run = await runCli('up', '--dir', pins, '--service', 'print', '--service-manager', 'launchd');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('<key>Label</key><string>dev.toolpin.gateway</string>');
    expect(run.stdout).toContain(`<string>${join(dir, 'a&amp;b', 'gateway.yaml')}</string>`);
    expect(run.stdout).toContain(
      `<key>StandardOutPath</key><string>${join(dir, 'a&amp;b', 'gateway.log')}</string>`,
    );
  });

  it('installs the unit where systemd looks and prints the commands that start it', async () => {
    process.env.XDG_CONFIG_HOME = join(dir, 'xdg');
    const run = await runCli(
      'up',
      '--dir',
      join(dir, 'pins'),
      '--service',
      'install',
      '--service-manager',
      'systemd',
    );
    expect(run.code).toBe(0);
    const unit = await readFile(join(dir, 'xdg', 'systemd', 'user', 'toolpin-gateway.service'), 'utf8');
    expect(unit).toContain('"serve" "--config"');
    expect(run.stderr).toContain('systemctl --user enable --now toolpin-gateway.service');
  });

  it('refuses a gateway file edited to listen beyond this machine, and bad values', async () => {
    const pins = join(dir, 'wide');
    await runCli('up', '--dir', pins, '--service', 'print', '--service-manager', 'systemd');
    const file = join(pins, 'gateway.yaml');
    await writeFile(
      file,
      (await readFile(file, 'utf8')).replace('listen: { host: 127.0.0.1', 'listen: { host: 0.0.0.0'),
    );
    const run = await runCli('up', '--dir', pins);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('listen.host must be a loopback address');
    expect(
      (await runCli('up', '--dir', pins, '--service', 'start', '--service-manager', 'systemd')).code,
    ).toBe(2);
    expect(
      (await runCli('up', '--dir', pins, '--service', 'print', '--service-manager', 'rc.d')).stderr,
    ).toContain('expected systemd or launchd');
  });

  it('toolpin down without a running gateway says so, and removes a stale pid file', async () => {
    const pins = join(dir, 'stale');
    await runCli('up', '--dir', pins, '--service', 'print', '--service-manager', 'systemd');
    // A pid that is not this gateway (this test's own process) is never signalled.
    await writeFile(join(pins, 'gateway.pid'), `${process.pid}\n`);
    const run = await runCli('down', '--dir', pins);
    expect(run).toMatchObject({ code: 0, stderr: 'toolpin down: the gateway is not running\n' });
  });
});
