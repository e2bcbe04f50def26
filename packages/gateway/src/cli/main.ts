#!/usr/bin/env node
// The toolpin command line: a thin list of registrations, one command per file.
import { Command, CommanderError } from 'commander';
import { registerApproveCommand } from './approveCommand.js';
import { registerCheckCommand } from './checkCommand.js';
import { registerDiffCommand } from './diffCommand.js';
import { registerDigestCommand } from './digestCommand.js';
import { registerKeyCommand } from './keyCommand.js';
import { registerPinCommand } from './pinCommand.js';
import { registerServeCommand } from './serveCommand.js';
import { registerWrapCommand } from './wrapCommand.js';
import { ExitCodes } from '../defaults.js';

const program = new Command('toolpin')
  .description('an MCP gateway that pins tool definitions and blocks drift')
  // Usage errors are bad input (exit 2) like every other; commander has already printed them.
  .exitOverride();

registerDigestCommand(program);
registerKeyCommand(program);
registerDiffCommand(program);
registerServeCommand(program);
registerPinCommand(program);
registerCheckCommand(program);
registerApproveCommand(program);
registerWrapCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  process.exitCode = error.exitCode === 0 ? ExitCodes.OK : ExitCodes.BAD_INPUT;
}
