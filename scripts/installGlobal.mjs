#!/usr/bin/env node
// The README's install command (`npx -y pnpm@12.4.2 install:global` installs the workspace, then
// runs this): packs @toolpin/digest and @toolpin/gateway (each pack builds first, through its
// `prepack` script) and installs both tarballs with one `npm install -g`, which puts `toolpin` on
// PATH.
//
//   node scripts/installGlobal.mjs [npm install options…]     e.g. --prefix ~/.local
//
// Both tarballs go to the same npm run so that the gateway's dependency on @toolpin/digest (its
// `workspace:*`, written as the version by pack) is met by the packed digest: neither package is
// on a registry. Their other dependencies come from npm's registry (or its cache).
//
// Run by the workspace's pnpm (`pnpm install:global`, or a test under `pnpm test`), the pack uses
// that pnpm binary (npm_execpath); otherwise `npx -y pnpm@<version>`, which costs seconds more.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The workspace's pnpm (its `packageManager`), run through npx as everywhere in this repository.
const pnpm = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager;
const npmArgs = process.argv.slice(2);

/** The command that runs the workspace's pnpm: the one running us if it is that version. */
function pnpmCommand() {
  const agent = process.env.npm_config_user_agent ?? '';
  const execPath = process.env.npm_execpath;
  // `pnpm exec` keeps the npm_execpath of whatever started pnpm (npx's npm): only a pnpm binary (pnpm 12 is one) is taken.
  const isPnpm = execPath !== undefined && /^pnpm(\.exe)?$/.test(basename(execPath));
  if (isPnpm && agent.startsWith(`${pnpm.replace('@', '/')} `)) return [execPath];
  return ['npx', '-y', pnpm];
}

/** Runs a command in the repository, stderr to ours; returns its stdout (or prints it: `show`). */
function run(command, args, show = false) {
  const stdout = show ? 'inherit' : 'pipe';
  const result = spawnSync(command, args, {
    cwd: root,
    encoding: 'utf8',
    // npm and npx are .cmd scripts on Windows, which only a shell runs.
    shell: process.platform === 'win32',
    stdio: ['ignore', stdout, 'inherit'],
  });
  if (result.status !== 0) {
    const how = result.error?.message ?? (result.signal === null ? `exit ${result.status}` : result.signal);
    throw new Error(`${command} ${args.slice(0, 4).join(' ')} … failed (${how})`);
  }
  return result.stdout;
}

const packDir = mkdtempSync(join(tmpdir(), 'toolpin-pack-'));
try {
  const packages = ['--filter', '@toolpin/digest', '--filter', '@toolpin/gateway'];
  const [command, ...pnpmArgs] = pnpmCommand();
  const json = run(command, [
    ...pnpmArgs,
    '--recursive',
    ...packages,
    'pack',
    '--pack-destination',
    packDir,
    '--json',
  ]);
  const tarballs = [JSON.parse(json)].flat().map((entry) => entry.filename);
  if (tarballs.length !== 2) throw new Error(`pnpm pack made ${tarballs.length} tarballs, not 2`);
  run('npm', ['install', '--global', '--no-fund', '--no-audit', ...npmArgs, ...tarballs], true);
  const { version } = JSON.parse(readFileSync(join(root, 'packages/gateway/package.json'), 'utf8'));
  process.stderr.write(`install:global: installed toolpin ${version}; run \`toolpin --version\`\n`);
} catch (error) {
  process.stderr.write(`install:global: ${error.message}\n`);
  process.exitCode = 1;
} finally {
  rmSync(packDir, { recursive: true, force: true });
}
