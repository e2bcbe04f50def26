// Ctrl-C (SIGINT) or SIGTERM on a command that started a stdio server: the server runs in a process
// group of its own (so a launcher such as npx cannot leave its server behind), which the terminal's
// signal never reaches; toolpin ends it, with its whole group, before it exits. A spawned toolpin
// and a real signal: the signal is the point.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  countAlive,
  eventually,
  RAW_ECHO,
  rawFixtureCommand,
  stdioPinFor,
  TOOLPIN_CLI,
  writePin,
  writtenPids,
} from '../transports/support.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolpin-interrupt-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `toolpin <command> <pin>` against a server whose listing hangs, signals it once the server and its grandchild run. */
async function interrupt(
  command: string,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; stderr: string; pids: number[] }> {
  const pids = join(dir, command);
  await mkdir(pids);
  const env = { TOOLPIN_RAW_PID_DIR: pids, TOOLPIN_RAW_GRANDCHILD: '1', TOOLPIN_RAW_MODE: 'hang' };
  const pin = await writePin(dir, stdioPinFor(command, rawFixtureCommand(), [RAW_ECHO], env));
  const child = spawn(
    process.execPath,
    [TOOLPIN_CLI, command, pin, '--yes'].slice(0, command === 'approve' ? 4 : 3),
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(await eventually(async () => (await writtenPids(pids)).length >= 2)).toBe(true);
  child.kill(signal);
  return { code: await closed, stderr, pids: await writtenPids(pids) };
}

test.each([
  ['check', 'SIGINT', 130],
  ['approve', 'SIGTERM', 143],
] as const)(
  '%s stopped by %s ends the server it started and its grandchild, exit %i',
  async (command, signal, code) => {
    const run = await interrupt(command, signal);
    expect(run.code).toBe(code);
    expect(run.stderr).toContain(`toolpin: ${signal}: stopping the servers this command started`);
    expect(await eventually(async () => (await countAlive(run.pids)) === 0)).toBe(true);
  },
  30_000,
);
