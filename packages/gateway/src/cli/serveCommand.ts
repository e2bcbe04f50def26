import type { Command } from 'commander';
import { GatewayError } from '../errors.js';
import { startGateway } from '../front/startGateway.js';
import { logUnhandledRejections } from '../observe/lastResort.js';
import { ExitCodes } from '../defaults.js';

/** SIGTERM grace period when the gateway file has no `shutdown.graceMs`. */
const DEFAULT_GRACE_MS = 10_000;

/** `toolpin serve --config <file>`: runs the gateway until SIGINT or SIGTERM. */
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the gateway: every pinned server at http://<listen>/<name>/mcp')
    .option('-c, --config <file>', 'gateway file', 'config/gateway.yaml')
    .option('-p, --port <port>', 'override listen.port')
    .option('--admin-port <port>', 'override admin.port')
    .option('--no-watch', 'do not watch the servers folder; reload pin files on SIGHUP only')
    .action(async (options: { config: string; port?: string; adminPort?: string; watch: boolean }) => {
      let running;
      try {
        running = await startGateway(options.config, {
          ...(options.port === undefined ? {} : { port: Number(options.port) }),
          ...(options.adminPort === undefined ? {} : { adminPort: Number(options.adminPort) }),
          watch: options.watch,
        });
      } catch (error) {
        const detail =
          error instanceof GatewayError ? `${error.code}: ${error.message}` : (error as Error).message;
        process.stderr.write(`toolpin: cannot start: ${detail}\n`);
        process.exit(ExitCodes.BAD_INPUT);
      }
      logUnhandledRejections(running.gateway.logger);
      let stopping = false;
      // SIGTERM drains: no new connections, listening streams end, in-flight calls get the grace period.
      const stop = (signal: string): void => {
        if (stopping) {
          running.gateway.logger.warn(
            { event: 'gateway.forced_exit', signal },
            'second signal: exiting without waiting',
          );
          process.exit(ExitCodes.FAILED);
        }
        stopping = true;
        const graceMs = running.config.shutdown?.graceMs ?? DEFAULT_GRACE_MS;
        running.gateway.logger.info({ event: 'gateway.stopping', signal, graceMs }, 'stopping');
        void running.close({ graceMs }).then(
          () => process.exit(ExitCodes.OK),
          (error: unknown) => {
            running.gateway.logger.error({ event: 'gateway.stop_failed', err: error }, 'shutdown failed');
            process.exit(ExitCodes.FAILED);
          },
        );
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
      // SIGHUP re-reads the servers folder (the watcher does the same on every change).
      process.on('SIGHUP', () => {
        running.gateway.logger.info({ event: 'gateway.reloading', signal: 'SIGHUP' }, 'reloading pin files');
        void running.reload();
      });
    });
}
