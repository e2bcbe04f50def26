import type { Command } from 'commander';
import { GatewayError } from '../errors.js';
import { startGateway, type RunningGateway } from '../front/startGateway.js';
import { logUnhandledRejections } from '../observe/lastResort.js';
import type { CliIo } from './cliIo.js';
import { reportInputError } from './cliInputError.js';
import { parsePort } from './commonOptions.js';
import { ExitCodes } from '../defaults.js';

/** SIGTERM grace period when the gateway file has no `shutdown.graceMs`. */
const DEFAULT_GRACE_MS = 10_000;

/** Options of {@link runServe}, as given on the command line. */
export interface ServeCommandOptions {
  /** The gateway file. @default 'config/gateway.yaml' */
  readonly config?: string;
  /** Overrides `listen.port`. */
  readonly port?: string;
  /** Overrides `admin.port`. */
  readonly adminPort?: string;
  /** Watch the servers folder (false: reload pin files on SIGHUP only). @default true */
  readonly watch?: boolean;
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
  try {
    port = parsePort('--port', options.port);
    adminPort = parsePort('--admin-port', options.adminPort);
  } catch (error) {
    return reportInputError('serve', error, io);
  }
  try {
    running = await startGateway(options.config ?? 'config/gateway.yaml', {
      ...(port === undefined ? {} : { port }),
      ...(adminPort === undefined ? {} : { adminPort }),
      watch: options.watch ?? true,
    });
  } catch (error) {
    const detail =
      error instanceof GatewayError ? `${error.code}: ${error.message}` : (error as Error).message;
    io.stderr.write(`toolpin: cannot start: ${detail}\n`);
    return ExitCodes.BAD_INPUT;
  }
  logUnhandledRejections(running.gateway.logger);
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

/** Registers `toolpin serve` on the program: hands the options to {@link runServe}, then ends the process. */
export function registerServeCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('serve')
    .description('run the gateway: every pinned server at http://<listen>/<name>/mcp')
    .option('-c, --config <file>', 'gateway file', 'config/gateway.yaml')
    .option('-p, --port <port>', 'override listen.port')
    .option('--admin-port <port>', 'override admin.port')
    .option('--no-watch', 'do not watch the servers folder; reload pin files on SIGHUP only')
    .action(async (options: ServeCommandOptions) => {
      const code = await runServe(options, io);
      done(code);
      // Sockets, watchers and children may still be closing: the gateway stopped, the process ends.
      io.exit(code);
    });
}
