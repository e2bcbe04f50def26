import { diffCatalogs } from '@toolpin/digest';
import type { Command } from 'commander';
import { explainDrift } from '../explain/explainDrift.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { diffWithMembers, formatDiff } from './formatDiff.js';
import { readCatalogSide } from './readCatalogSide.js';
import { ExitCodes } from '../defaults.js';

/** Options of {@link runDiff}. */
export interface DiffCommandOptions {
  /** Catalog file, or pin file (YAML or JSON with `pin: {catalog, tools}`). */
  readonly pinned: string;
  /** Catalog file, or pin file. */
  readonly observed: string;
  /** Profile label for catalog files. @default the pin file's profile, else TRACE_PROFILE */
  readonly profile?: string;
  /** Print the diff as JSON. */
  readonly json?: boolean;
}

/** `toolpin diff <pinned> <observed>`: prints how the two catalogs differ; exit 0 equal, 1 drift, 2 bad input. */
export async function runDiff(options: DiffCommandOptions, io: CliIo): Promise<number> {
  try {
    const pinned = readCatalogSide(options.pinned, options.profile);
    const observed = readCatalogSide(options.observed, options.profile ?? pinned.profile);
    if (observed.profile !== pinned.profile) {
      throw new CliInputError(
        `${options.observed} is under profile ${observed.profile} and ${options.pinned} under ${pinned.profile}; digests under different profiles never match`,
      );
    }
    // Word diffs of changed texts, renames and members pinned by value, when both sides hold definitions.
    const explanation = explainDrift(pinned, observed);
    const diff = diffWithMembers(diffCatalogs(pinned, observed), explanation);
    io.stdout.write(
      options.json === true
        ? JSON.stringify({ ...diff, explanation }) + '\n'
        : formatDiff(diff, pinned, observed, explanation),
    );
    return diff.equal ? ExitCodes.OK : ExitCodes.DRIFT;
  } catch (error) {
    return reportInputError('diff', error, io);
  }
}

/** Registers `toolpin diff` on the program: parses the arguments and hands them to {@link runDiff}. */
export function registerDiffCommand(program: Command, io: CliIo, done: (code: number) => void): void {
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
    .action(
      async (pinned: string, observed: string, options: Omit<DiffCommandOptions, 'pinned' | 'observed'>) =>
        done(await runDiff({ ...options, pinned, observed }, io)),
    );
}
