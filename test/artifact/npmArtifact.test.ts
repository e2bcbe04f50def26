// A real npm MCP server pinned through npx: @modelcontextprotocol/server-everything (the dev
// dependency), resolved by npm against a local registry mirror on 127.0.0.1 (its packument and
// tarballs built from the installed package), run by npx from a project folder that holds it, so
// nothing is fetched from the network. A new version is published with the same catalog: wrap
// refuses it (artifact_drifted), approve records it.
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { runToolpin } from '../support/runToolpin.js';
import { startNpmRegistryMirror, type NpmRegistryMirror } from '../support/npmRegistryMirror.js';
import { runWrapInProcess, startWrapInProcess } from '../transports/support.js';

const PACKAGE = '@modelcontextprotocol/server-everything';
const installed = realpathSync(
  dirname(dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/dist/index.js`))),
);
const VERSION = (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string })
  .version;
const NEXT = `${VERSION}-next.1`;

/** A tarball of the installed package (package.json at `version`, dist), as `npm pack` lays it out. */
async function tarballOf(dir: string, version: string): Promise<Buffer> {
  const root = join(dir, `pack-${version}`);
  await mkdir(join(root, 'package'), { recursive: true });
  const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  await writeFile(join(root, 'package', 'package.json'), JSON.stringify({ ...manifest, version }, null, 2));
  await cp(join(installed, 'dist'), join(root, 'package', 'dist'), { recursive: true });
  return execFileSync('tar', ['czf', '-', '-C', root, 'package']);
}

/**
 * The project npx runs in: the package installed at `version` (its package.json; its code the
 * installed dist, whose imports resolve from the real folder) and its bin linked.
 */
async function installInProject(project: string, version: string): Promise<void> {
  const target = join(project, 'node_modules', PACKAGE);
  await rm(target, { recursive: true, force: true });
  await mkdir(target, { recursive: true });
  const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  await writeFile(join(target, 'package.json'), JSON.stringify({ ...manifest, version }, null, 2));
  await symlink(join(installed, 'dist'), join(target, 'dist'));
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'desktop-project', version: '1.0.0', dependencies: { [PACKAGE]: version } }),
  );
}

describe(`the artifact of ${PACKAGE} run through npx`, () => {
  let dir: string;
  let mirror: NpmRegistryMirror;
  let pinFile: string;
  /** This thread's environment before the client's env was set in it. */
  const saved = new Map<string, string | undefined>();

  const artifact = async (): Promise<Record<string, unknown>> =>
    (parse(await readFile(pinFile, 'utf8')) as { pin: { artifact: Record<string, unknown> } }).pin.artifact;
  const catalog = async (): Promise<string> =>
    (parse(await readFile(pinFile, 'utf8')) as { pin: { catalog: string } }).pin.catalog;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-npx-'));
    mirror = await startNpmRegistryMirror(PACKAGE, [
      { version: VERSION, tarball: await tarballOf(dir, VERSION) },
    ]);
    const project = join(dir, 'project');
    await installInProject(project, VERSION);
    await mkdir(join(project, 'node_modules', '.bin'), { recursive: true });
    await symlink(
      join('..', PACKAGE, 'dist', 'index.js'),
      join(project, 'node_modules', '.bin', 'mcp-server-everything'),
    );
    const config = join(dir, 'claude_desktop_config.json');
    const env = {
      npm_config_registry: mirror.url,
      npm_config_cache: join(dir, 'npm-cache'),
      npm_config_update_notifier: 'false',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    };
    const entry = { command: 'npx', args: ['-y', PACKAGE, 'stdio'], env, cwd: project };
    await writeFile(config, JSON.stringify({ mcpServers: { everything: entry } }, null, 2));
    const run = await runToolpin(['protect', config, '--dir', join(dir, 'pins')]);
    // The client passes the entry's env to wrap (the pin keeps the names only): wrap, run in-process
    // below, reads it from this thread's environment, as a wrap started by the client would.
    for (const [name, value] of Object.entries(env)) {
      saved.set(name, process.env[name]);
      process.env[name] = value;
    }
    expect(run.stderr).toContain(`artifact: npm ${PACKAGE}@${VERSION}`);
    expect(run.code).toBe(0);
    pinFile = join(dir, 'pins', 'everything.yaml');
  }, 60_000);

  afterAll(async () => {
    for (const [name, value] of saved)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    await mirror?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the pin records the version and registry integrity npm resolved', async () => {
    expect(await artifact()).toEqual({
      kind: 'npm',
      package: PACKAGE,
      version: VERSION,
      integrity: mirror.integrity(VERSION),
    });
    // npm asked the registry; the upstream itself stays `npx -y <package>`, as the client wrote it.
    expect(mirror.requests).toContain(`/${PACKAGE}`);
    const upstream = (
      parse(await readFile(pinFile, 'utf8')) as { upstream: { command: string[]; args: string[] } }
    ).upstream;
    expect([...upstream.command, ...upstream.args]).toEqual(['npx', '-y', PACKAGE, 'stdio']);
  });

  it('wrap runs the pinned version, its integrity checked', async () => {
    const wrap = await startWrapInProcess(pinFile, undefined);
    expect((await wrap.client.listTools()).tools.map((tool) => tool.name)).toContain('echo');
    const [verified] = wrap.events('upstream.artifact_verified');
    expect(verified?.artifact).toEqual(await artifact());
    expect(await wrap.close()).toBe(0);
  }, 30_000);

  describe('a new version is published, with the same catalog', () => {
    beforeAll(async () => {
      mirror.publish({ version: NEXT, tarball: await tarballOf(dir, NEXT) });
      await installInProject(join(dir, 'project'), NEXT);
    }, 20_000);

    it('wrap refuses to start it: artifact_drifted, old -> new', async () => {
      const wrap = runWrapInProcess(pinFile, undefined);
      expect(await wrap.end()).toBe(2);
      const [drifted] = wrap.events('upstream.artifact_drifted');
      expect(drifted).toMatchObject({
        action: 'refused',
        reason: 'artifact_drifted',
        pinned: { kind: 'npm', version: VERSION, integrity: mirror.integrity(VERSION) },
        observed: { kind: 'npm', version: NEXT, integrity: mirror.integrity(NEXT) },
      });
      expect(String(drifted?.summary)).toContain(`${PACKAGE}@${VERSION}`);
      expect(String(drifted?.summary)).toContain(`-> npm ${PACKAGE}@${NEXT}`);
    }, 30_000);

    it('approve lists the new version, finds its catalog identical, and records its artifact', async () => {
      const before = await catalog();
      const run = await runToolpin(['approve', pinFile, '--yes']);
      expect(run.stderr + run.stdout).not.toContain('cannot tell');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`artifact_drifted npm ${PACKAGE}@${VERSION}`);
      expect(run.stdout).toMatch(/^no drift: \d+ tools match the pin$/m);
      expect(await catalog()).toBe(before);
      expect(await artifact()).toEqual({
        kind: 'npm',
        package: PACKAGE,
        version: NEXT,
        integrity: mirror.integrity(NEXT),
      });
    }, 60_000);
  });
});
