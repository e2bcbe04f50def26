import type { Command } from 'commander';
import { GatewayError } from '../errors.js';
import { startGateway } from '../front/startGateway.js';

/** `toolpin serve --config <file>`: runs the gateway until SIGINT or SIGTERM. */
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the gateway: every pinned server at http://<listen>/<name>/mcp')
    .option('-c, --config <file>', 'gateway file', 'config/gateway.yaml')
    .option('-p, --port <port>', 'override listen.port')
    .action(async (options: { config: string; port?: string }) => {
      let running;
      try {
        running = await startGateway(options.config, options.port === undefined ? {} : { port: Number(options.port) });
      } catch (error) {
        const detail = error instanceof GatewayError ? `${error.code}: ${error.message}` : (error as Error).message;
        process.stderr.write(`toolpin: cannot start: ${detail}\n`);
        process.exit(2);
      }
      const stop = (signal: string): void => {
        running.gateway.logger.info({ event: 'gateway.stopping', signal }, 'stopping');
        void running.close().then(() => process.exit(0));
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });
}
