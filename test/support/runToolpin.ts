import { Readable } from 'node:stream';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../packages/gateway/dist/cli/program.js';
import { captureIo } from '../../packages/gateway/test/cli/capturedIo.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const main = fileURLToPath(new URL('../../packages/gateway/dist/cli/main.js', import.meta.url));

/** What a finished `toolpin` process printed and exited with. */
export interface ToolpinRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `toolpin <args…>` in-process: the program the binary runs (built by `tsc -b`), with its
 * output captured and stdin empty (not a terminal), or, given `typed`, a terminal's stdin on which
 * those lines are typed. Servers started in the test keep answering it.
 */
export async function runToolpin(args: readonly string[], typed?: readonly string[]): Promise<ToolpinRun> {
  const io = captureIo(
    typed === undefined
      ? undefined
      : Object.assign(Readable.from(typed.map((line) => `${line}\n`)), { isTTY: true }),
  );
  const code = await runCli(args, io);
  return { code, stdout: io.written.stdout, stderr: io.written.stderr };
}

/**
 * Runs the built binary (`tsc -b` first) as a child process without blocking this process's event
 * loop, so servers started in the test keep answering it. stdin is closed (not a terminal). For the
 * smoke test of each command's wiring (arguments, exit code of the process).
 */
export function spawnToolpin(args: readonly string[]): Promise<ToolpinRun> {
  return runProcess(process.execPath, [main, ...args]);
}

/**
 * Runs any program (an installed `toolpin`, npm, a script) from the repository root as a child
 * process, stdin closed, and resolves with what it printed and its exit code.
 */
export function runProcess(command: string, args: readonly string[]): Promise<ToolpinRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The `script` program (util-linux), which runs a command on a pseudo-terminal; undefined when absent. */
export const SCRIPT_PROGRAM = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path));

function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs the built CLI on a pseudo-terminal (via `script`), typing `input`, so its interactive
 * prompts are exercised as a person would meet them. stdout and stderr arrive merged.
 */
export function runToolpinInTerminal(args: readonly string[], input: string): Promise<ToolpinRun> {
  return new Promise((resolve, reject) => {
    if (SCRIPT_PROGRAM === undefined) throw new Error('no script(1) on this machine');
    const command = [process.execPath, main, ...args].map(quote).join(' ');
    const child = spawn(SCRIPT_PROGRAM, ['-qec', command, '/dev/null'], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
