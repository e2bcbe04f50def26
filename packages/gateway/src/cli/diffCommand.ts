import { diffCatalogs } from '@toolpin/digest';
import type { Command } from 'commander';
import { explainDrift, type DriftExplanation } from '../explain/explainDrift.js';
import { explainInstructions, formatInstructionsDrift } from '../explain/explainInstructions.js';
import { formatDriftExplanation } from '../explain/formatDriftExplanation.js';
import { PIN_SURFACES } from '../config/pinSurfaces.js';
import { readDiffFile, type DiffFile } from './readDiffFile.js';
import { readSurfaceSides, type SurfaceSides } from './readSurfaceSides.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { diffWithMembers } from './formatDiff.js';
import { holdsTools, readCatalogSideOf } from './readCatalogSide.js';
import { ExitCodes } from '../defaults.js';
import { compareArtifacts, describeArtifact } from '../policy/artifactDrift.js';

/** Options of {@link runDiff}. */
export interface DiffCommandOptions {
  /**
   * Catalog file, or pin file (read and verified as `check` reads it), or a prompts/list or
   * resources/templates/list result: every surface both sides hold is compared.
   */
  readonly pinned: string;
  /** Catalog file, or pin file (verified the same way). */
  readonly observed: string;
  /** Profile label for catalog files. @default the pin file's profile, else TRACE_PROFILE */
  readonly profile?: string;
  /** Print the diff as JSON. */
  readonly json?: boolean;
}

/** `toolpin diff <pinned> <observed>`: prints how the two catalogs differ; exit 0 equal, 1 drift, 2 bad input. */
export async function runDiff(options: DiffCommandOptions, io: CliIo): Promise<number> {
  try {
    const pinnedFile = await readDiffFile(options.pinned);
    const observedFile = await readDiffFile(options.observed);
    const others = diffSurfaces(readSurfaceSides(pinnedFile), readSurfaceSides(observedFile));
    // Tools are compared when both sides hold them, or when nothing else can be (as before).
    const withTools =
      (holdsTools(pinnedFile.document) && holdsTools(observedFile.document)) || !others.compared;
    let equal = others.equal;
    let text = '';
    let json: Record<string, unknown> = {};
    if (withTools) {
      const tools = diffTools(options, pinnedFile, observedFile);
      equal &&= tools.equal;
      text += tools.text;
      json = tools.json;
    }
    const artifact = diffArtifacts(pinnedFile, observedFile);
    equal &&= artifact.equal;
    io.stdout.write(
      options.json === true
        ? JSON.stringify({
            ...json,
            ...(others.compared ? { surfaces: others.json } : {}),
            ...(artifact.json === undefined ? {} : { artifact: artifact.json }),
          }) + '\n'
        : text + others.text + artifact.text,
    );
    return equal ? ExitCodes.OK : ExitCodes.DRIFT;
  } catch (error) {
    return reportInputError('diff', error, io);
  }
}

function diffTools(
  options: DiffCommandOptions,
  pinnedFile: DiffFile,
  observedFile: DiffFile,
): { equal: boolean; text: string; json: Record<string, unknown> } {
  const pinned = readCatalogSideOf(pinnedFile, options.profile);
  const observed = readCatalogSideOf(observedFile, options.profile ?? pinned.profile);
  if (observed.profile !== pinned.profile) {
    throw new CliInputError(
      `${options.observed} is under profile ${observed.profile} and ${options.pinned} under ${pinned.profile}; digests under different profiles never match`,
    );
  }
  // Word diffs of changed texts, renames and members pinned by value, when both sides hold definitions.
  const explanation = explainDrift(pinned, observed);
  const diff = diffWithMembers(diffCatalogs(pinned, observed), explanation);
  return {
    equal: diff.equal,
    // The layout of `check` and `approve`: the two catalog digests, then the one formatter's text.
    text:
      `pinned    ${pinned.catalog}\nobserved  ${observed.catalog}\n` + formatDriftExplanation(explanation),
    json: { ...diff, explanation },
  };
}

/**
 * The prompts, resource templates and instructions both sides hold, explained as `check` explains
 * them; a surface only one side holds is named, not compared.
 */
function diffSurfaces(
  pinned: SurfaceSides,
  observed: SurfaceSides,
): { compared: boolean; equal: boolean; text: string; json: Record<string, unknown> } {
  let compared = false;
  let equal = true;
  let text = '';
  const json: Record<string, unknown> = {};
  for (const surface of PIN_SURFACES) {
    const before = pinned[surface.section];
    const after = observed[surface.section];
    if (before === undefined && after === undefined) continue;
    if (before === undefined || after === undefined) {
      text += `${surface.items}: only in the ${before === undefined ? 'observed' : 'pinned'} side, not compared\n`;
      continue;
    }
    compared = true;
    const explanation: DriftExplanation = explainDrift(before, after, { members: surface.members });
    equal &&= explanation.equal;
    text += `${surface.items}\n  pinned    ${before.catalog}\n  observed  ${after.catalog}\n`;
    text += formatDriftExplanation(explanation, { item: surface.item, items: surface.items });
    json[surface.section] = { pinned: before.catalog, observed: after.catalog, ...explanation };
  }
  if (pinned.instructions !== undefined && observed.instructions !== undefined) {
    compared = true;
    const drift = explainInstructions(pinned.instructions, observed.instructions);
    equal &&= drift.equal;
    text += formatInstructionsDrift(drift);
    json.instructions = drift;
  }
  return { compared, equal, text, json };
}

/**
 * The artifacts of two pin files (docs/pin-lifecycle.md#the-artifact), compared as `check` compares
 * them (`artifact_drifted old -> new [severity]`); one only one side records is named, not compared.
 */
function diffArtifacts(
  pinnedFile: DiffFile,
  observedFile: DiffFile,
): { equal: boolean; text: string; json?: Record<string, unknown> } {
  const before = pinnedFile.server?.pin.artifact;
  const after = observedFile.server?.pin.artifact;
  if (before === undefined && after === undefined) return { equal: true, text: '' };
  if (before === undefined || after === undefined)
    return {
      equal: true,
      text: `artifact: only in the ${before === undefined ? 'observed' : 'pinned'} side, not compared\n`,
    };
  const comparison = compareArtifacts(before, after);
  const json = { pinned: before, observed: after, equal: comparison.equal };
  if (comparison.equal) return { equal: true, text: `artifact  ${describeArtifact(before)}\n`, json };
  return {
    equal: false,
    text: `artifact_drifted  ${comparison.summary} [${comparison.severity}]\n`,
    json: { ...json, severity: comparison.severity },
  };
}

/** Registers `toolpin diff` on the program: parses the arguments and hands them to {@link runDiff}. */
export function registerDiffCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('diff')
    .description(
      'compare a pinned catalog or pin file with an observed catalog or pin file: tools, and the prompts, resource templates and instructions both hold',
    )
    .argument('<pinned>', 'catalog file, or pin file (verified as check reads it)')
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
