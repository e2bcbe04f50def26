import type { Command } from 'commander';
import { loadGatewayConfig, loadSinglePinConfig, type GatewayConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import { startGateway, type RunningGateway } from '../ingress/startGateway.js';
import { IdleHeapRelease } from '../observe/idleHeapRelease.js';
import { logUnhandledRejections } from '../observe/lastResort.js';
import { createLogger, type LogFormat } from '../observe/logger.js';
import type { CliIo } from './cliIo.js';
import { reportInputError } from './cliInputError.js';
import { collect, parseLogFormat, parsePort } from './commonOptions.js';
import {
  checkServeSource,
  resolveServeSource,
  type ServeSource,
  type ServeSourceOptions,
} from './serveSource.js';
import { ExitCodes } from '../defaults.js';

/** SIGTERM grace period when the gateway file has no `shutdown.graceMs`. */
const DEFAULT_GRACE_MS = 10_000;

/**
 * Options of {@link runServe}, as given on the command line: a gateway file (`config`), or one
 * server without one (`pin`, or `name` with `url`/`command` and `trustOnFirstUse`: see
 * {@link ServeSourceOptions}).
 */
export interface ServeCommandOptions extends ServeSourceOptions {
  /** json or pretty. @default pretty when stdout is a terminal, else json */
  readonly logFormat?: string;
  /** Overrides `listen.port`. */
  readonly port?: string;
  /** Overrides `admin.port`. */
  readonly adminPort?: string;
  /** Watch the servers folder (false: reload pin files on SIGHUP only). @default true */
  readonly watch?: boolean;
  /** Return the heap a burst grew once the gateway is idle ({@link IdleHeapRelease}). @default true */
  readonly heapRelease?: boolean;
}

/**
 * `toolpin serve`: runs the gateway until SIGINT or SIGTERM (SIGHUP reloads the pin files).
 * Resolves with the exit code once it stopped: 0 drained, 1 on a second signal or a failed
 * shutdown, 2 when it cannot start.
 */
export async function runServe(options: ServeCommandOptions, io: CliIo): Promise<number> {
  let running: RunningGateway;
  let port: number | undefined;
  let adminPort: number | undefined;
  let logFormat: LogFormat | undefined;
  let source: ServeSource;
  try {
    port = parsePort('--port', options.port);
    adminPort = parsePort('--admin-port', options.adminPort);
    logFormat = parseLogFormat(options.logFormat);
    checkServeSource(options);
    source = await resolveServeSource(options, (line) => io.stderr.write(`toolpin serve: ${line}\n`));
  } catch (error) {
    return reportInputError('serve', error, io);
  }
  try {
    const config = await loadServeConfig(source);
    const logger = createLogger({
      level: config.log.level,
      destination: io.stdout,
      ...(logFormat === undefined ? {} : { format: logFormat }),
    });
    running = await startGateway(config, {
      logger,
      ...(port === undefined ? {} : { port }),
      ...(adminPort === undefined ? {} : { adminPort }),
      watch: options.watch ?? true,
    });
  } catch (error) {
    io.stderr.write(`toolpin: cannot start: ${startFailure(error)}\n`);
    return ExitCodes.BAD_INPUT;
  }
  printRoutes(running, io);
  logUnhandledRejections(running.gateway.logger);
  const release = options.heapRelease === false ? undefined : startHeapRelease(running);
  const code = await untilStopped(running, io);
  release?.stop();
  return code;
}

/**
 * The process is the gateway's: once a burst is over and the gateway idle, the heap V8 grew for
 * it goes back to the system, and each release is logged (`process.heap_released`).
 */
function startHeapRelease(running: RunningGateway): IdleHeapRelease {
  const { logger } = running.gateway;
  return new IdleHeapRelease({
    onRelease: (release) =>
      logger.info({ event: 'process.heap_released', ...release }, 'idle: returned the heap a burst grew'),
  }).start();
}

/** The flag of `toolpin serve` that overrides each listener's port setting. */
const PORT_FLAGS: Readonly<Record<string, string>> = {
  'listen.port': '--port',
  'admin.port': '--admin-port',
};

/** Why the gateway did not start; a listener that cannot bind is named with the flag that moves it. */
function startFailure(error: unknown): string {
  if (!(error instanceof GatewayError)) return (error as Error).message;
  const flag = error.code === 'GW_LISTEN_FAILED' ? PORT_FLAGS[String(error.data.setting)] : undefined;
  return `${error.code}: ${error.message}${flag === undefined ? '' : ` (or ${flag} <port>)`}`;
}

/**
 * Serves until SIGINT or SIGTERM (SIGHUP reloads the pin files); resolves with the exit code once
 * stopped: 0 drained, 1 on a second signal or a failed shutdown.
 */
function untilStopped(running: RunningGateway, io: CliIo): Promise<number> {
  const { logger } = running.gateway;
  return new Promise<number>((resolve) => {
    let stopping = false;
    // SIGTERM drains: no new connections, listening streams end, in-flight calls get the grace period.
    const stop = (signal: string): void => {
      if (stopping) {
        logger.warn({ event: 'gateway.forced_exit', signal }, 'second signal: exiting without waiting');
        resolve(ExitCodes.FAILED);
        return;
      }
      stopping = true;
      const graceMs = running.config.shutdown?.graceMs ?? DEFAULT_GRACE_MS;
      logger.info({ event: 'gateway.stopping', signal, graceMs }, 'stopping');
      void running.close({ graceMs }).then(
        () => resolve(ExitCodes.OK),
        (error: unknown) => {
          logger.error({ event: 'gateway.stop_failed', err: error }, 'shutdown failed');
          resolve(ExitCodes.FAILED);
        },
      );
    };
    io.signals.on('SIGINT', () => stop('SIGINT'));
    io.signals.on('SIGTERM', () => stop('SIGTERM'));
    // SIGHUP re-reads the servers folder (the watcher does the same on every change).
    io.signals.on('SIGHUP', () => {
      logger.info({ event: 'gateway.reloading', signal: 'SIGHUP' }, 'reloading pin files');
      void running.reload();
    });
  });
}

function loadServeConfig(source: ServeSource): Promise<GatewayConfig> {
  return 'pin' in source ? loadSinglePinConfig(source.pin) : loadGatewayConfig(source.config);
}

// For the person who started it (stdout carries the log): where each route and the admin API are.
function printRoutes(running: RunningGateway, io: CliIo): void {
  for (const server of running.config.servers)
    io.stderr.write(`toolpin serve: ${server.name} at ${running.url}/${server.name}/mcp\n`);
  const review = running.config.admin.ui === 'off' ? '' : ', /ui';
  io.stderr.write(
    `toolpin serve: admin at ${running.adminUrl} (/healthz, /readyz, /metrics, /status${review})\n`,
  );
}

/** Registers `toolpin serve` on the program: hands the options to {@link runServe}, then ends the process. */
export function registerServeCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('serve')
    .description(
      'run the gateway: every pinned server at http://<listen>/<name>/mcp (a gateway file, or one server: --pin, or --name with --url/--command and --trust-on-first-use)',
    )
    .option('-c, --config <file>', 'gateway file (default: config/gateway.yaml)')
    .option('--pin <file>', 'serve this one pin file alone, without a gateway file')
    .option('--name <name>', 'serve one server without a pin file yet: its name, also its route')
    .option('--url <url>', 'with --name: its Streamable HTTP endpoint')
    .option('--command <cmd>', 'with --name: a stdio server to spawn, as one command line')
    .option('--args <arg>', 'with --command: one more argument, spaces kept (repeatable)', collect, [])
    .option(
      '--trust-on-first-use',
      'with --name: the first complete catalog observed becomes the pin (written to --out)',
    )
    .option('--out <file>', 'with --name: the pin file written (default: ~/.toolpin/<name>.yaml)')
    .option('-p, --port <port>', 'override listen.port')
    .option('--admin-port <port>', 'override admin.port')
    .option('--log-format <format>', 'json or pretty (default: pretty on a terminal, else json)')
    .option('--no-watch', 'do not watch the pin files; reload them on SIGHUP only')
    .option(
      '--no-heap-release',
      'keep the heap a burst grew when idle (no full collection when traffic stops)',
    )
    .action(async (options: ServeCommandOptions) => {
      const code = await runServe(options, io);
      done(code);
      // Sockets, watchers and children may still be closing: the gateway stopped, the process ends.
      io.exit(code);
    });
}
