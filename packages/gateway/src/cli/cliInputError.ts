import type { CliIo } from './cliIo.js';
import { ExitCodes } from '../defaults.js';

/** Bad input to a CLI command (unreadable file, bad JSON, wrong shape, a tool without digest): exit 2. */
export class CliInputError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliInputError';
  }
}

/** Writes `toolpin <command>: <message>` to stderr and returns exit code 2; rethrows anything else. */
export function reportInputError(command: string, error: unknown, io: Pick<CliIo, 'stderr'>): number {
  if (!(error instanceof CliInputError)) throw error;
  io.stderr.write(`toolpin ${command}: ${error.message}\n`);
  return ExitCodes.BAD_INPUT;
}
