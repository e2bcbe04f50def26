import type { Command } from 'commander';
import { GatewayError } from '../errors.js';
import { escapeInvisible } from '../explain/escapeInvisible.js';
import { formatDriftExplanation } from '../explain/formatDriftExplanation.js';
import { formatInstructionsDrift } from '../explain/explainInstructions.js';
import { PIN_SURFACES } from '../config/pinSurfaces.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { addListingOptions, parseCapabilities, parseHeaderOptions, parseTimeout } from './commonOptions.js';
import { comparePinWithLive, type PinnedLiveCatalog } from '../transports/pinnedLiveCatalog.js';
import { readPinFileForCli } from './readPinFileForCli.js';
import { describeArtifact } from '../policy/artifactDrift.js';
import { describeApprovedBy } from '../config/manifestDigests.js';
import { DEFAULT_TIMEOUT_MS, ExitCodes } from '../defaults.js';

/** Options of {@link runCheck}, as given on the command line. */
export interface CheckCommandOptions {
  /** The pin file (YAML or JSON). */
  readonly file: string;
  /** Print the result as JSON. */
  readonly json?: boolean;
  /** `"Name: value"` headers sent while listing, beside the pin's own. */
  readonly header?: readonly string[];
  /** Per request timeout in milliseconds. @default 30000 */
  readonly timeout?: string;
  /** Client capabilities declared at initialize, as JSON. */
  readonly capabilities?: string;
}

/** The surfaces beside tools, as the check reports them: text sections and JSON members. */
function reportSurfaces(result: PinnedLiveCatalog): {
  text: string;
  json: Record<string, unknown>;
  drift: boolean;
  high: boolean;
} {
  const { server, observed, surfaces } = result;
  let text = '';
  const json: Record<string, unknown> = {};
  let drift = false;
  let high = false;
  for (const surface of PIN_SURFACES) {
    const explanation = surfaces[surface.section];
    if (explanation === undefined) continue;
    const pinned = server.pin[surface.section]?.catalog ?? '';
    const seen = observed.pin[surface.section]?.catalog ?? '';
    const pages = result.surfacePages[surface.section] ?? 0;
    text += `${surface.items}\n  pinned    ${pinned}\n  observed  ${seen} (${pages} page(s))\n`;
    text += formatDriftExplanation(explanation, { item: surface.item, items: surface.items });
    json[surface.section] = { pinned, observed: seen, pages, ...explanation };
    drift ||= !explanation.equal;
    high ||= explanation.drift.some((entry) => entry.severity === 'high');
  }
  if (surfaces.instructions !== undefined) {
    text += formatInstructionsDrift(surfaces.instructions);
    json.instructions = surfaces.instructions;
    drift ||= !surfaces.instructions.equal;
    high ||= !surfaces.instructions.equal;
  }
  return { text, json, drift, high };
}

/** The artifact of a pin (a stdio command's, an HTTP server's stated one) as the check reports it (docs/pin-lifecycle.md#the-artifact). */
function reportArtifact(result: PinnedLiveCatalog): {
  text: string;
  json?: unknown;
  drift: boolean;
  high: boolean;
} {
  const artifact = result.artifact;
  if (artifact === undefined) return { text: '', drift: false, high: false };
  const { pinned, observed, comparison } = artifact;
  const json = {
    pinned: pinned ?? null,
    observed: observed ?? null,
    equal: comparison?.equal ?? null,
    ...(artifact.problem === undefined ? {} : { problem: artifact.problem }),
  };
  if (comparison !== undefined && !comparison.equal)
    return {
      text: `artifact_drifted  ${comparison.summary} [${comparison.severity}]\n`,
      json,
      drift: true,
      high: comparison.severity === 'high',
    };
  if (observed === undefined)
    return {
      text: `artifact not resolved: ${artifact.problem ?? 'unknown'}\n`,
      json,
      drift: false,
      high: false,
    };
  const text =
    pinned === undefined
      ? `artifact not pinned: ${describeArtifact(observed)} (not enforced; toolpin approve records it)\n`
      : `artifact  ${describeArtifact(observed)}\n`;
  return { text, json, drift: false, high: false };
}

const SURFACE_NAMES: Readonly<Record<string, string>> = {
  prompts: 'prompts',
  resourceTemplates: 'resource templates',
  instructions: 'instructions',
};

function report(result: PinnedLiveCatalog): { status: 'equal' | 'drift'; text: string; json: unknown } {
  const { server, observed, explanation } = result;
  const others = reportSurfaces(result);
  const artifact = reportArtifact(result);
  const drift = !explanation.equal || observed.unverifiable.length > 0 || others.drift || artifact.drift;
  const lines = [
    `${server.name}: ${result.file}`,
    `pinned    ${server.pin.catalog}`,
    `observed  ${observed.pin.catalog} (${result.pages} page(s))`,
    ...(server.approvedBy === undefined ? [] : [describeApprovedBy(server.approvedBy)]),
  ];
  let text = lines.join('\n') + '\n' + formatDriftExplanation(explanation) + others.text + artifact.text;
  for (const item of observed.unverifiable) {
    const what = item.surface ?? 'tools';
    text += `unverifiable ${item.name === null ? `${what}[${item.index}]` : escapeInvisible(item.name)}: ${item.problem}\n`;
  }
  // A pin written before issue 14 pins tools only: the rest is served as is, and the check says so.
  if (result.notPinned.length > 0)
    text += `surfaces not pinned: ${result.notPinned.map((surface) => SURFACE_NAMES[surface] ?? surface).join(', ')} (not checked, not enforced; toolpin pin records them)\n`;
  const status = drift ? 'drift' : 'equal';
  // The highest severity of the drift (an item without a digest is high); null when equal.
  const severity = !drift
    ? null
    : observed.unverifiable.length > 0 ||
        others.high ||
        artifact.high ||
        explanation.drift.some((entry) => entry.severity === 'high')
      ? 'high'
      : 'low';
  const json = {
    status,
    server: server.name,
    file: result.file,
    pinned: server.pin.catalog,
    observed: observed.pin.catalog,
    pages: result.pages,
    severity,
    ...explanation,
    unverifiable: observed.unverifiable,
    surfaces: others.json,
    notPinned: result.notPinned,
    ...(artifact.json === undefined ? {} : { artifact: artifact.json }),
    ...(server.approvedBy === undefined ? {} : { approvedBy: server.approvedBy }),
  };
  return { status, text, json };
}

/** `toolpin check <pin-file>`: exit 0 when the live catalog is the pinned one, 1 on drift, 2 when it cannot tell. */
export async function runCheck(options: CheckCommandOptions, io: CliIo): Promise<number> {
  try {
    const headers = parseHeaderOptions(options.header);
    const timeout = parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS);
    const pinFile = await readPinFileForCli(options.file);
    if (pinFile.server.trustOnFirstUse === true)
      return unknown(
        options,
        pinFile.file,
        'the pin file says trust-on-first-use: nothing is pinned yet',
        io,
      );
    const capabilities = parseCapabilities(options.capabilities);
    const live = await comparePinWithLive(pinFile, headers, { timeoutMs: timeout, capabilities });
    // A pinned artifact that cannot be resolved now says nothing either way: cannot tell.
    if (live.artifact?.pinned !== undefined && live.artifact.problem !== undefined)
      return unknown(options, pinFile.file, `the artifact cannot be resolved: ${live.artifact.problem}`, io);
    const result = report(live);
    io.stdout.write(options.json === true ? JSON.stringify(result.json) + '\n' : result.text);
    return result.status === 'equal' ? ExitCodes.OK : ExitCodes.DRIFT;
  } catch (error) {
    // Unlisted (or, client mode, not authorized: toolpin login): cannot tell.
    if (
      error instanceof GatewayError &&
      (error.code === 'GW_CATALOG_UNAVAILABLE' || error.code === 'GW_UPSTREAM_AUTH')
    )
      return unknown(options, options.file, error.message, io);
    // An unreadable or invalid pin file cannot tell either: --json still says so on stdout.
    if (options.json === true && error instanceof CliInputError)
      io.stdout.write(
        JSON.stringify({ status: 'unknown', file: options.file, reason: error.message }) + '\n',
      );
    return reportInputError('check', error, io);
  }
}

// Cannot tell is never drift: a server that is down or a listing cut short says nothing about the pin.
function unknown(options: CheckCommandOptions, file: string, reason: string, io: CliIo): number {
  if (options.json === true) io.stdout.write(JSON.stringify({ status: 'unknown', file, reason }) + '\n');
  io.stderr.write(`toolpin check: cannot tell: ${reason}\n`);
  return ExitCodes.UNKNOWN;
}

/** Registers `toolpin check` on the program: parses the arguments and hands them to {@link runCheck}. */
export function registerCheckCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  const command = program
    .command('check')
    .description(
      "list a pinned server's live catalog (tools, and the prompts, resource templates and instructions the pin pins) and compare it with the pin: exit 0 equal, 1 drift, 2 cannot tell",
    )
    .argument('<pin-file>', 'pin file (YAML or JSON)')
    .option('--json', 'print the result as JSON');
  addListingOptions(command).action(async (file: string, options: Omit<CheckCommandOptions, 'file'>) =>
    done(await runCheck({ ...options, file }, io)),
  );
}
