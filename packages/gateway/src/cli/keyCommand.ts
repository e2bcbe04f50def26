import { encodeToolKey } from '@toolpin/digest';
import type { Command } from 'commander';
import type { CliIo } from './cliIo.js';

/** Options of {@link runKey}. */
export interface KeyCommandOptions {
  /** The tool name. */
  readonly name: string;
}

/** `toolpin key <name>`: prints the fold key of a tool name; exit 0. */
export async function runKey(options: KeyCommandOptions, io: CliIo): Promise<number> {
  io.stdout.write(`${encodeToolKey(options.name)}\n`);
  return 0;
}

/** Registers `toolpin key` on the program: parses the arguments and hands them to {@link runKey}. */
export function registerKeyCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('key')
    .description('print the fold key (tool:…) of a tool name')
    .argument('<name>', 'the tool name')
    .action(async (name: string) => done(await runKey({ name }, io)));
}
