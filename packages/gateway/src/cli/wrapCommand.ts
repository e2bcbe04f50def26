import { createWriteStream } from 'node:fs';
import type { Command } from 'commander';
import { loadPinFile, loadPrincipals, type PrincipalConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import { answerStartFailure } from '../ingress/startFailureAnswer.js';
import { runStdioFront, type StdioFront } from '../ingress/stdioFront.js';
import { logUnhandledRejections } from '../observe/lastResort.js';
import { createLogger, type LogFormat } from '../observe/logger.js';
import { startTracing, tracingSettings } from '../observe/tracingSdk.js';
import type { CliIo } from './cliIo.js';
import { reportInputError } from './cliInputError.js';
import { parseLogFormat } from './commonOptions.js';
import { loginBeforeWrap } from './wrapLogin.js';
import { ExitCodes } from '../defaults.js';

/** Options of {@link runWrap}, as given on the command line. */
export interface WrapCommandOptions {
  /** The server's pin file. */
  readonly pin: string;
  /** The stdio server to run, `[program, ...args]`. @default the pin file's upstream */
  readonly command?: readonly string[];
  /** Append the log to this file instead of stderr. */
  readonly logFile?: string;
  /** trace | debug | info | warn | error | fatal | silent. @default 'info' */
  readonly logLevel?: string;
  /** json or pretty. @default pretty when the log goes to a terminal (stderr), else json */
  readonly logFormat?: string;
  /** A gateway file whose `principals` block scopes the local user (docs/scopes.md). */
  readonly principals?: string;
}

/**
 * `toolpin wrap --pin <pin-file> [-- <command …>]`: serves MCP on stdin/stdout in front of a stdio
 * server (the command, or the pin's upstream) until the client or the server ends the session.
 * stdout carries MCP only; logs go to stderr or `logFile`. Resolves with the exit code: 0 when the
 * client ended the session (or a signal did), 1 when the server ended it, 2 when it cannot start.
 */
export async function runWrap(options: WrapCommandOptions, io: CliIo): Promise<number> {
  let format: LogFormat | undefined;
  try {
    format = parseLogFormat(options.logFormat);
  } catch (error) {
    return reportInputError('wrap', error, io);
  }
  const destination =
    options.logFile === undefined ? io.stderr : createWriteStream(options.logFile, { flags: 'a' });
  const logger = createLogger({
    level: options.logLevel ?? 'info',
    destination,
    ...(format === undefined ? {} : { format }),
  });
  logUnhandledRejections(logger);
  // Traces only by the OTEL_* variables here (no gateway file); spans go to the collector, never stdout.
  const settings = tracingSettings(undefined, process.env);
  const tracing = settings === undefined ? undefined : await startTracing(settings, logger);
  if (tracing !== undefined)
    logger.info(
      { event: 'telemetry.started', endpoint: tracing.endpoint, service: settings?.serviceName },
      'OpenTelemetry tracing on',
    );
  const finish = async (code: number): Promise<number> => {
    await tracing?.close();
    logger.flush?.();
    if (destination !== io.stderr) await new Promise<void>((resolve) => destination.end(resolve));
    return code;
  };
  const command = options.command ?? [];
  let front: StdioFront;
  try {
    const server = await loginBeforeWrap(await loadPinFile(options.pin), logger, io);
    front = await runStdioFront({
      ...(await principalsOption(options.principals)),
      server,
      logger,
      input: io.stdin,
      output: io.stdout,
      ...(command.length === 0 ? {} : { command }),
    });
  } catch (error) {
    const detail =
      error instanceof GatewayError ? `${error.code}: ${error.message}` : (error as Error).message;
    logger.fatal({ event: 'wrap.failed', err: detail }, 'toolpin wrap: cannot start');
    if (destination !== io.stderr) io.stderr.write(`toolpin wrap: cannot start: ${detail}\n`);
    // The person sees why in their client: its initialize is answered with the reason.
    const reason = error instanceof GatewayError ? error.code : 'start_failed';
    await answerStartFailure(io.stdin, io.stdout, `toolpin wrap cannot start: ${detail}`, reason);
    return finish(ExitCodes.BAD_INPUT);
  }
  const running = front;
  const stop = (signal: string): void => {
    logger.info({ event: 'wrap.stopping', signal }, 'stopping');
    void running.close();
  };
  io.signals.once('SIGINT', () => stop('SIGINT'));
  io.signals.once('SIGTERM', () => stop('SIGTERM'));
  const endedBy = await running.ended;
  logger.info({ event: 'wrap.stopped', endedBy }, 'toolpin wrap: session ended');
  // The client sees the upstream's crash as it would without toolpin: this process ends in error.
  return finish(endedBy === 'upstream' ? ExitCodes.FAILED : ExitCodes.OK);
}

/** The `principals` block of the gateway file `--principals` names, as runStdioFront takes it. */
async function principalsOption(
  file: string | undefined,
): Promise<{ principals?: readonly PrincipalConfig[] }> {
  const principals = file === undefined ? undefined : await loadPrincipals(file);
  return principals === undefined ? {} : { principals };
}

/** Registers `toolpin wrap` on the program: hands the options to {@link runWrap}, then ends the process. */
export function registerWrapCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('wrap')
    .description(
      "serve MCP on stdio, enforcing a pin in front of a stdio command (after --) or the pin file's upstream",
    )
    .requiredOption('--pin <file>', "the server's pin file")
    .option(
      '--log-file <file>',
      'append the log to this file instead of stderr (JSON lines unless --log-format pretty)',
    )
    .option('--log-level <level>', 'trace | debug | info | warn | error | fatal | silent', 'info')
    .option('--log-format <format>', 'json or pretty (default: pretty when stderr is a terminal, else json)')
    .option('--principals <gateway-file>', "scope the local user by this gateway file's principals block")
    .argument('[command...]', 'the stdio server to run, after --')
    .action(async (command: string[], options: Omit<WrapCommandOptions, 'command'>) => {
      const code = await runWrap({ ...options, command }, io);
      done(code);
      // stdin may still be open (the server ended the session): the session is over, the process ends.
      io.exit(code);
    });
}
