import { ExitCodes } from '../defaults.js';
/** Bad input to a CLI command (unreadable file, bad JSON, wrong shape, a tool without digest): exit 2. */
export class CliInputError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliInputError';
  }
}

/** Writes `toolpin <command>: <message>` to stderr and sets exit code 2; rethrows anything else. */
export function reportInputError(command: string, error: unknown): void {
  if (!(error instanceof CliInputError)) throw error;
  process.stderr.write(`toolpin ${command}: ${error.message}\n`);
  process.exitCode = ExitCodes.BAD_INPUT;
}
