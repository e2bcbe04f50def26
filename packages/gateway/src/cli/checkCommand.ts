import type { Command } from 'commander';
import { GatewayError } from '../errors.js';
import { escapeInvisible } from '../explain/escapeInvisible.js';
import { formatDriftExplanation } from '../explain/formatDriftExplanation.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { addListingOptions, parseCapabilities, parseHeaderOptions, parseTimeout } from './commonOptions.js';
import { comparePinWithLive, readPinFileForCli, type PinnedLiveCatalog } from './pinnedLiveCatalog.js';
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

function report(result: PinnedLiveCatalog): { status: 'equal' | 'drift'; text: string; json: unknown } {
  const { server, observed, explanation } = result;
  const drift = !explanation.equal || observed.unverifiable.length > 0;
  const lines = [
    `${server.name}: ${result.file}`,
    `pinned    ${server.pin.catalog}`,
    `observed  ${observed.pin.catalog} (${result.pages} page(s))`,
  ];
  let text = lines.join('\n') + '\n' + formatDriftExplanation(explanation);
  for (const tool of observed.unverifiable) {
    text += `unverifiable ${tool.name === null ? `tools[${tool.index}]` : escapeInvisible(tool.name)}: ${tool.problem}\n`;
  }
  const status = drift ? 'drift' : 'equal';
  // The highest severity of the drift (a tool without a digest is high); null when equal.
  const severity = !drift
    ? null
    : observed.unverifiable.length > 0 || explanation.drift.some((entry) => entry.severity === 'high')
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
    const result = report(await comparePinWithLive(pinFile, headers, { timeoutMs: timeout, capabilities }));
    io.stdout.write(options.json === true ? JSON.stringify(result.json) + '\n' : result.text);
    return result.status === 'equal' ? ExitCodes.OK : ExitCodes.DRIFT;
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'GW_CATALOG_UNAVAILABLE')
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
      "list a pinned server's live catalog and compare it with the pin: exit 0 equal, 1 drift, 2 cannot tell",
    )
    .argument('<pin-file>', 'pin file (YAML or JSON)')
    .option('--json', 'print the result as JSON');
  addListingOptions(command).action(async (file: string, options: Omit<CheckCommandOptions, 'file'>) =>
    done(await runCheck({ ...options, file }, io)),
  );
}
