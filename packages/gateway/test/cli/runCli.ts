import { fileURLToPath } from 'node:url';
import { runCli as runProgram } from '../../src/cli/program.js';
import { captureIo } from './capturedIo.js';

/** What a command printed and exited with. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A fixture path under test/fixtures/catalogs. */
export function fixture(file: string): string {
  return fileURLToPath(new URL(`../fixtures/catalogs/${file}`, import.meta.url));
}

/** Runs `toolpin <args…>` in-process (the program the binary runs) and returns its exit code and output. */
export async function runCli(...args: string[]): Promise<CliRun> {
  const io = captureIo();
  const code = await runProgram(args, io);
  return { code, stdout: io.written.stdout, stderr: io.written.stderr };
}
