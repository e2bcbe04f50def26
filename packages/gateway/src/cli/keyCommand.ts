import { encodeToolKey } from '@toolpin/digest';
import type { Command } from 'commander';

/** `toolpin key <name>`: prints the fold key of a tool name. */
export function registerKeyCommand(program: Command): void {
  program
    .command('key')
    .description('print the fold key (tool:…) of a tool name')
    .argument('<name>', 'the tool name')
    .action((name: string) => {
      process.stdout.write(`${encodeToolKey(name)}\n`);
    });
}
