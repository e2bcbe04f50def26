#!/usr/bin/env node
// The review page's browser test (test/ui/) drives Debian's `chromium` with playwright-core; this
// makes sure it is there before `pnpm test` (the README's test command, and .ci/run through it).
// Idempotent: does nothing when the browser exists. Installs it with apt-get when it can (root, or
// password-less sudo); otherwise says what to do and fails.
//
//   node scripts/ensureChromium.mjs        TOOLPIN_CHROMIUM=/path/to/chromium to use another binary
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/** The Chromium the browser test launches. */
export const CHROMIUM_PATH = process.env.TOOLPIN_CHROMIUM ?? '/usr/bin/chromium';

function run(command, args) {
  // No prompt (tzdata and the like) on a fresh machine.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  return spawnSync(command, args, { stdio: 'inherit', env }).status === 0;
}

/** Installs Debian's chromium when missing; resolves with the path, or throws saying what to do. */
export function ensureChromium() {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = !asRoot && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (hasApt && (asRoot || sudo)) {
    const apt = (args) => (asRoot ? run('apt-get', args) : run('sudo', ['-n', 'apt-get', ...args]));
    process.stderr.write(
      `toolpin: ${CHROMIUM_PATH} is missing; installing Debian's chromium for the browser test\n`,
    );
    if (!apt(['install', '-y', '--no-install-recommends', 'chromium']))
      if (!apt(['update']) || !apt(['install', '-y', '--no-install-recommends', 'chromium']))
        throw new Error('apt-get could not install chromium (see its output above)');
    if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
    throw new Error(
      `chromium is installed but ${CHROMIUM_PATH} does not exist: set TOOLPIN_CHROMIUM to its binary`,
    );
  }
  throw new Error(
    `${CHROMIUM_PATH} is missing and cannot be installed from here ` +
      `(${hasApt ? 'not root and no password-less sudo' : 'no apt-get'}): the browser test in test/ui needs it. ` +
      'Install Chromium (Debian: apt-get install chromium) or set TOOLPIN_CHROMIUM to a Chromium binary.',
  );
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  try {
    ensureChromium();
  } catch (error) {
    process.stderr.write(`toolpin: ${error.message}\n`);
    process.exit(1);
  }
}
