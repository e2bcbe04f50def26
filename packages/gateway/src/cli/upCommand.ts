import { spawn, type ChildProcess } from 'node:child_process';
import { open, readFile, unlink } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { listPinFiles } from '../config/serversDir.js';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { ExitCodes } from '../defaults.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { gatewayArgv, serviceManagerOf, writeService } from './gatewayService.js';
import {
  ensureManagedGateway,
  managedGateway,
  routeUrl,
  runningGatewayPid,
  type GatewayPorts,
  type ManagedGateway,
} from './managedGateway.js';

/** Options of {@link runUp}, as given on the command line. */
export interface UpCommandOptions {
  /** The pin folder (its `gateway.yaml`, `http/`). @default ~/.toolpin */
  readonly dir?: string;
  /** `print` or `install` the user service file instead of starting the gateway. */
  readonly service?: string;
  /** systemd or launchd. @default this platform's */
  readonly serviceManager?: string;
  /** How long to wait for the gateway to be ready, in ms. @default 15000 */
  readonly waitMs?: number;
}

const SCRIPT = fileURLToPath(new URL('./main.js', import.meta.url));

/** Waits for the gateway's `/readyz`; rejects when the child ends first or the wait runs out. */
async function untilReady(child: ChildProcess, ports: GatewayPorts, waitMs: number): Promise<void> {
  let ended = false;
  child.once('exit', () => (ended = true));
  const deadline = Date.now() + waitMs;
  while (!ended && Date.now() < deadline) {
    const ready = await fetch(`http://127.0.0.1:${ports.adminPort}/readyz`, {
      signal: AbortSignal.timeout(1000),
    })
      .then(
        async (response) => response.ok && ((await response.json()) as { state?: unknown }).state === 'ready',
      )
      .catch(() => false);
    if (ready && !ended) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(ended ? 'it ended' : `not ready after ${waitMs} ms`);
}

/** The last lines of the gateway's log, to say why it did not start. */
async function logTail(gateway: ManagedGateway, from: number): Promise<string> {
  const text = await readFile(gateway.logFile, 'utf8').catch(() => '');
  return text.slice(from).trim().split('\n').slice(-5).join('\n');
}

/** Starts the gateway in the background: its own process group, output appended to the log, the pid recorded. */
async function start(
  gateway: ManagedGateway,
  ports: GatewayPorts,
  options: UpCommandOptions,
  io: CliIo,
): Promise<number> {
  const log = await open(gateway.logFile, 'a', 0o600);
  const from = (await log.stat()).size;
  const [node = process.execPath, ...args] = gatewayArgv(gateway, SCRIPT);
  const child = spawn(node, args, {
    cwd: gateway.dir,
    detached: true,
    windowsHide: true,
    stdio: ['ignore', log.fd, log.fd],
  });
  await log.close();
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new CliInputError(`cannot start ${node}`);
  await writeFileAtomic(gateway.pidFile, `${pid}\n`, 0o600);
  try {
    await untilReady(child, ports, options.waitMs ?? 15_000);
  } catch (error) {
    if (child.exitCode === null) child.kill('SIGTERM');
    await unlink(gateway.pidFile).catch(() => undefined);
    io.stderr.write(
      `toolpin up: the gateway did not start (${(error as Error).message}); ${gateway.logFile} says:\n${await logTail(gateway, from)}\n`,
    );
    return ExitCodes.FAILED;
  }
  io.stderr.write(
    `toolpin up: the gateway runs (pid ${pid}); log: ${gateway.logFile}; toolpin down stops it\n`,
  );
  await printRoutes(gateway, ports, io);
  return ExitCodes.OK;
}

async function printRoutes(gateway: ManagedGateway, ports: GatewayPorts, io: CliIo): Promise<void> {
  const files = await listPinFiles(gateway.pins);
  if (files.length === 0)
    io.stderr.write(
      `toolpin up: no HTTP server routed yet (toolpin protect routes them, pins in ${gateway.pins})\n`,
    );
  for (const file of files) {
    const name = (file.split(/[\\/]/).pop() ?? '').replace(/\.(ya?ml|json)$/i, '');
    io.stderr.write(`toolpin up: ${name} at ${routeUrl(ports, name)}\n`);
  }
}

async function up(options: UpCommandOptions, io: CliIo): Promise<number> {
  const gateway = managedGateway(options.dir);
  const manager = options.service === undefined ? undefined : serviceManagerOf(options.serviceManager);
  const ports = await ensureManagedGateway(gateway);
  if (options.service !== undefined && manager !== undefined) {
    await writeService(options.service, manager, gateway, SCRIPT, io);
    return ExitCodes.OK;
  }
  const running = await runningGatewayPid(gateway);
  if (running !== undefined) {
    io.stderr.write(
      `toolpin up: the gateway already runs (pid ${running}); it serves new pins as they appear\n`,
    );
    await printRoutes(gateway, ports, io);
    return ExitCodes.OK;
  }
  return start(gateway, ports, options, io);
}

/**
 * `toolpin up`: runs the gateway protect manages (loopback only, its ports recorded in
 * `<dir>/gateway.yaml`) in the background for the HTTP pins of `<dir>/http`, its pid in
 * `gateway.pid` and its log in `gateway.log`; or, with `service`, prints or installs the user
 * service file that runs it. Exit 0; 1 when the gateway did not start; 2 on bad input.
 */
export async function runUp(options: UpCommandOptions, io: CliIo): Promise<number> {
  try {
    return await up(options, io);
  } catch (error) {
    return reportInputError('up', error, io);
  }
}

/** Registers `toolpin up` on the program: hands the options to {@link runUp}. */
export function registerUpCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('up')
    .description(
      'run the toolpin gateway for the HTTP servers toolpin protect routes, in the background (loopback; toolpin down stops it)',
    )
    .option('--dir <folder>', 'the pin folder (default ~/.toolpin)')
    .option('--service <action>', 'print or install the user service file (systemd, launchd) instead')
    .option('--service-manager <manager>', "systemd or launchd (default: this platform's)")
    .action(async (options: UpCommandOptions) => done(await runUp(options, io)));
}
