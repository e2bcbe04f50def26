import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const main = fileURLToPath(new URL('../../packages/gateway/dist/cli/main.js', import.meta.url));

/** What a finished `toolpin` process printed and exited with. */
export interface ToolpinRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the built CLI (`tsc -b` first) as a child process without blocking this process's event
 * loop, so servers started in the test keep answering it. stdin is closed (not a terminal).
 */
export function runToolpin(args: readonly string[]): Promise<ToolpinRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
