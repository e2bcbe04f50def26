import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** A fixture path under test/fixtures/catalogs. */
export function fixture(file: string): string {
  return fileURLToPath(new URL(`../fixtures/catalogs/${file}`, import.meta.url));
}

/** Runs the built CLI (`tsc -b` must have run) and returns its exit code and output. */
export function runCli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [main, ...args], { cwd: root, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
