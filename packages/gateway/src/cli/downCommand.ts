import { execFile } from 'node:child_process';
import { readFile, unlink } from 'node:fs/promises';
import type { Command } from 'commander';
import { ExitCodes } from '../defaults.js';
import { reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { managedGateway, processAlive, runningGatewayPid, type ManagedGateway } from './managedGateway.js';

/** Options of {@link runDown}, as given on the command line. */
export interface DownCommandOptions {
  /** The pin folder. @default ~/.toolpin */
  readonly dir?: string;
}

/** The command line of a process (undefined where it cannot be read: Windows, a process gone). */
async function commandLineOf(pid: number): Promise<string | undefined> {
  if (process.platform === 'linux')
    return readFile(`/proc/${pid}/cmdline`, 'utf8').then(
      (text) => text.split('\0').join(' '),
      () => undefined,
    );
  if (process.platform === 'win32') return undefined;
  return new Promise((resolve) =>
    execFile('ps', ['-o', 'command=', '-p', String(pid)], (error, stdout) =>
      resolve(error === null ? stdout : undefined),
    ),
  );
}

/** True when the recorded process is this gateway (a pid file outliving a reboot can name another process). */
async function isOurGateway(pid: number, gateway: ManagedGateway): Promise<boolean> {
  if (process.platform === 'win32') return true;
  const line = await commandLineOf(pid);
  return line !== undefined && line.includes(' serve ') && line.includes(gateway.file);
}

async function until(gone: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!gone() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return gone();
}

async function down(options: DownCommandOptions, io: CliIo): Promise<number> {
  const gateway = managedGateway(options.dir);
  const pid = await runningGatewayPid(gateway);
  if (pid === undefined || !(await isOurGateway(pid, gateway))) {
    await unlink(gateway.pidFile).catch(() => undefined);
    io.stderr.write('toolpin down: the gateway is not running\n');
    return ExitCodes.OK;
  }
  // SIGTERM drains (in-flight calls get the grace period); a second one ends it at once.
  process.kill(pid, 'SIGTERM');
  let stopped = await until(() => !processAlive(pid), 12_000);
  if (!stopped) {
    process.kill(pid, 'SIGTERM');
    stopped = await until(() => !processAlive(pid), 3000);
  }
  if (!stopped) {
    io.stderr.write(`toolpin down: the gateway (pid ${pid}) did not stop; see ${gateway.logFile}\n`);
    return ExitCodes.FAILED;
  }
  await unlink(gateway.pidFile).catch(() => undefined);
  io.stderr.write(`toolpin down: the gateway (pid ${pid}) stopped\n`);
  return ExitCodes.OK;
}

/** `toolpin down`: stops the gateway `toolpin up` started (by its pid file), and removes the pid file. */
export async function runDown(options: DownCommandOptions, io: CliIo): Promise<number> {
  try {
    return await down(options, io);
  } catch (error) {
    return reportInputError('down', error, io);
  }
}

/** Registers `toolpin down` on the program: hands the options to {@link runDown}. */
export function registerDownCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('down')
    .description('stop the toolpin gateway started by toolpin up')
    .option('--dir <folder>', 'the pin folder (default ~/.toolpin)')
    .action(async (options: DownCommandOptions) => done(await runDown(options, io)));
}
