import { diffCatalogs } from '@toolpin/digest';
import type { Command } from 'commander';
import { explainDrift } from '../explain/explainDrift.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import { diffWithMembers, formatDiff } from './formatDiff.js';
import { readCatalogSide } from './readCatalogSide.js';
import { ExitCodes } from '../defaults.js';

interface DiffCommandOptions {
  profile?: string;
  json?: boolean;
}

/** `toolpin diff <pinned> <observed>`: exit 0 equal, 1 drift, 2 bad input. */
export function registerDiffCommand(program: Command): void {
  program
    .command('diff')
    .description('compare a pinned catalog or pin file with an observed catalog or pin file')
    .argument('<pinned>', 'catalog file, or pin file (YAML or JSON with pin: {catalog, tools})')
    .argument('<observed>', 'catalog file, or pin file')
    .option(
      '--profile <label>',
      'profile label for catalog files (default: the pin file profile, else trace)',
    )
    .option('--json', 'print the diff as JSON')
    .action((pinnedPath: string, observedPath: string, options: DiffCommandOptions) => {
      try {
        const pinned = readCatalogSide(pinnedPath, options.profile);
        const observed = readCatalogSide(observedPath, options.profile ?? pinned.profile);
        if (observed.profile !== pinned.profile) {
          throw new CliInputError(
            `${observedPath} is under profile ${observed.profile} and ${pinnedPath} under ${pinned.profile}; digests under different profiles never match`,
          );
        }
        // Word diffs of changed texts, renames and members pinned by value, when both sides hold definitions.
        const explanation = explainDrift(pinned, observed);
        const diff = diffWithMembers(diffCatalogs(pinned, observed), explanation);
        process.stdout.write(
          options.json
            ? JSON.stringify({ ...diff, explanation }) + '\n'
            : formatDiff(diff, pinned, observed, explanation),
        );
        process.exitCode = diff.equal ? ExitCodes.OK : ExitCodes.DRIFT;
      } catch (error) {
        reportInputError('diff', error);
      }
    });
}
