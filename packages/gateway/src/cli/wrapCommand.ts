import { createWriteStream } from 'node:fs';
import type { Command } from 'commander';
import { loadPinFile } from '../config/index.js';
import { GatewayError } from '../errors.js';
import { runStdioFront } from '../front/stdioFront.js';
import { logUnhandledRejections } from '../observe/lastResort.js';
import { createLogger } from '../observe/logger.js';
import { ExitCodes } from '../defaults.js';

interface WrapOptions {
  pin: string;
  logFile?: string;
  logLevel: string;
}

/**
 * `toolpin wrap --pin <pin-file> [-- <command …>]`: runs toolpin as a stdio MCP server in front of
 * a stdio server (the command, or the pin's upstream). stdout carries MCP only; logs go to stderr
 * or `--log-file`.
 */
export function registerWrapCommand(program: Command): void {
  program
    .command('wrap')
    .description(
      "serve MCP on stdio, enforcing a pin in front of a stdio command (after --) or the pin file's upstream",
    )
    .requiredOption('--pin <file>', "the server's pin file")
    .option('--log-file <file>', 'append JSON log lines to this file instead of stderr')
    .option('--log-level <level>', 'trace | debug | info | warn | error | fatal | silent', 'info')
    .argument('[command...]', 'the stdio server to run, after --')
    .action(async (command: string[], options: WrapOptions) => {
      const destination =
        options.logFile === undefined ? process.stderr : createWriteStream(options.logFile, { flags: 'a' });
      const logger = createLogger({ level: options.logLevel, destination });
      logUnhandledRejections(logger);
      const finish = (code: number): void => {
        logger.flush?.();
        if (destination === process.stderr) process.exit(code);
        else destination.end(() => process.exit(code));
      };
      let front;
      try {
        const server = await loadPinFile(options.pin);
        front = await runStdioFront({ server, logger, ...(command.length === 0 ? {} : { command }) });
      } catch (error) {
        const detail =
          error instanceof GatewayError ? `${error.code}: ${error.message}` : (error as Error).message;
        logger.fatal({ event: 'wrap.failed', err: detail }, 'toolpin wrap: cannot start');
        if (destination !== process.stderr) process.stderr.write(`toolpin wrap: cannot start: ${detail}\n`);
        finish(ExitCodes.BAD_INPUT);
        return;
      }
      const running = front;
      const stop = (signal: string): void => {
        logger.info({ event: 'wrap.stopping', signal }, 'stopping');
        void running.close();
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      const endedBy = await running.ended;
      logger.info({ event: 'wrap.stopped', endedBy }, 'toolpin wrap: session ended');
      // The client sees the upstream's crash as it would without toolpin: this process ends in error.
      finish(endedBy === 'upstream' ? ExitCodes.FAILED : ExitCodes.OK);
    });
}
