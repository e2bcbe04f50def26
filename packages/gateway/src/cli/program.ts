import { Command, CommanderError } from 'commander';
import { registerApproveCommand } from './approveCommand.js';
import { registerCheckCommand } from './checkCommand.js';
import { CLIENT_INFO, ExitCodes } from '../defaults.js';
import type { CliIo } from './cliIo.js';
import { registerDiffCommand } from './diffCommand.js';
import { registerDigestCommand } from './digestCommand.js';
import { registerKeyCommand } from './keyCommand.js';
import { registerLoginCommand } from './loginCommand.js';
import { registerPinCommand } from './pinCommand.js';
import { registerProtectCommand } from './protectCommand.js';
import { registerServeCommand } from './serveCommand.js';
import { registerUnprotectCommand } from './unprotectCommand.js';
import { registerWrapCommand } from './wrapCommand.js';

/** The toolpin command line: a thin list of registrations, one command per file, each writing to `io`. */
export function createProgram(io: CliIo, done: (code: number) => void): Command {
  const program = new Command('toolpin')
    .description('an MCP gateway that pins tool definitions and blocks drift')
    // `--version` prints the version of @toolpin/gateway's own package.json, the one it announces.
    .version(CLIENT_INFO.version)
    // Usage errors are bad input (exit 2) like every other; commander has already printed them.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  registerDigestCommand(program, io, done);
  registerKeyCommand(program, io, done);
  registerDiffCommand(program, io, done);
  registerServeCommand(program, io, done);
  registerPinCommand(program, io, done);
  registerCheckCommand(program, io, done);
  registerApproveCommand(program, io, done);
  registerWrapCommand(program, io, done);
  registerLoginCommand(program, io, done);
  registerProtectCommand(program, io, done);
  registerUnprotectCommand(program, io, done);
  return program;
}

/**
 * Runs `toolpin <args…>` (the arguments after the program name) with `io`, and resolves with its
 * exit code: what the binary does, callable in-process.
 */
export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  let code = 0;
  const program = createProgram(io, (exitCode) => {
    code = exitCode;
  });
  try {
    await program.parseAsync([...args], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return error.exitCode === 0 ? ExitCodes.OK : ExitCodes.BAD_INPUT;
  }
  return code;
}
