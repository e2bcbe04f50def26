import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { planPinUpdate } from '../config/planPinUpdate.js';
import { rewritePinFile } from '../config/rewritePinFile.js';
import { GatewayError } from '../errors.js';
import { escapeInvisible } from '../explain/escapeInvisible.js';
import type { ToolDrift } from '../explain/explainDrift.js';
import type { UnpinnedMembers } from '../explain/explainExtraMembers.js';
import { formatDriftExplanation } from '../explain/formatDriftExplanation.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import {
  addListingOptions,
  collect,
  parseCapabilities,
  parseHeaderOptions,
  parseTimeout,
} from './commonOptions.js';
import { comparePinWithLive, readPinFileForCli } from './pinnedLiveCatalog.js';
import { reportUncheckedSchemas } from './reportUncheckedSchemas.js';
import { DEFAULT_TIMEOUT_MS, ExitCodes } from '../defaults.js';

/** Options of {@link runApprove}, as given on the command line. */
export interface ApproveCommandOptions {
  /** The pin file (YAML or JSON), rewritten atomically with comments and order kept. */
  readonly file: string;
  /** Approve only these tools (a rename moves both names). @default every drifted tool */
  readonly tool?: readonly string[];
  /** Approve every low-severity drift at once (high ones are listed, to approve one by one). */
  readonly low?: boolean;
  /** Approve without asking (required when stdin is not a terminal). */
  readonly yes?: boolean;
  /** `"Name: value"` headers sent while listing, beside the pin's own. */
  readonly header?: readonly string[];
  /** Per request timeout in milliseconds. @default 30000 */
  readonly timeout?: string;
  /** Client capabilities declared at initialize, as JSON. */
  readonly capabilities?: string;
}

function describe(entry: ToolDrift): string {
  const name = escapeInvisible(entry.tool ?? entry.key);
  if (entry.kind === 'renamed')
    return `renamed ${escapeInvisible(entry.from?.tool ?? entry.from?.key ?? '?')} -> ${name}`;
  return `${entry.kind} ${name} [${entry.severity}]`;
}

// Under --low the high drift is left for review: each one named with how to approve it alone.
function highLeftOver(entries: readonly ToolDrift[]): string {
  const high = entries.filter((entry) => entry.severity === 'high');
  if (high.length === 0) return '';
  const lines = high.map(
    (entry) =>
      `  ${describe(entry)}: review it, then toolpin approve --tool ${JSON.stringify(entry.tool ?? entry.key)}\n`,
  );
  return `high-severity drift is approved one tool at a time, never with --low:\n${lines.join('')}`;
}

function describeRecorded(entry: UnpinnedMembers): string {
  const members = entry.members.map(escapeInvisible).join(', ');
  return `pin ${members} of ${escapeInvisible(entry.tool ?? entry.key)} by value`;
}

// Interactive only on a terminal: a pipe or CI job must say --yes, so no approval is ever implicit.
// Each question needs its own yes; the first no (or the end of input) declines them all. Lines are
// read through one iterator, so answers typed ahead are never lost between questions.
async function confirmEach(questions: readonly string[], io: CliIo): Promise<boolean> {
  const prompt = createInterface({ input: io.stdin, output: io.stderr });
  const answers = prompt[Symbol.asyncIterator]();
  try {
    for (const question of questions) {
      io.stderr.write(question);
      const answer = await answers.next();
      if (answer.done === true || !/^y(es)?$/i.test(answer.value.trim())) return false;
    }
    return true;
  } finally {
    prompt.close();
  }
}

/**
 * The questions of an interactive approval: each high-severity drift on its own (it is shown and
 * approved one by one), then the rest (low drift, members to record) together.
 */
function approvalQuestions(approved: readonly ToolDrift[], others: number, file: string): string[] {
  const high = approved.filter((entry) => entry.severity === 'high');
  const rest = approved.length - high.length + others;
  return [
    ...high.map((entry) => `Approve ${describe(entry)}? [y/N] `),
    ...(rest > 0 ? [`Approve ${rest} other change(s) and rewrite ${file}? [y/N] `] : []),
  ];
}

async function approve(options: ApproveCommandOptions, io: CliIo): Promise<number> {
  const headers = parseHeaderOptions(options.header);
  const timeout = parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS);
  const pinFile = await readPinFileForCli(options.file);
  const capabilities = parseCapabilities(options.capabilities);
  const live = await comparePinWithLive(pinFile, headers, { timeoutMs: timeout, capabilities });
  for (const tool of live.observed.unverifiable) {
    io.stderr.write(
      `warning: ${escapeInvisible(tool.name ?? `tools[${tool.index}]`)} has no digest and cannot be approved: ${tool.problem}\n`,
    );
  }
  const lowOnly = options.low === true;
  const planned = planPinUpdate(live.server, live.observed, options.tool, { lowOnly });
  if (!planned.ok) throw new CliInputError(planned.message);
  const { plan } = planned;
  const leftOver = lowOnly ? highLeftOver(plan.explanation.drift) : '';
  if (plan.approved.length === 0 && plan.recorded.length === 0) {
    const why = lowOnly
      ? `no low-severity drift in the live catalog of ${live.server.name}`
      : `the live catalog of ${live.server.name} matches ${live.file}`;
    io.stdout.write(`nothing to approve: ${why}\n${leftOver}`);
    return ExitCodes.OK;
  }
  io.stdout.write(formatDriftExplanation(plan.explanation));
  io.stdout.write(leftOver);
  const changes = [...plan.approved.map(describe), ...plan.recorded.map(describeRecorded)];
  io.stdout.write(`to approve in ${live.file}:\n${changes.map((change) => `  ${change}\n`).join('')}`);
  if (options.yes !== true) {
    if (io.stdin.isTTY !== true) {
      io.stderr.write(
        'toolpin approve: refusing to rewrite the pin without --yes when stdin is not a terminal; nothing was written\n',
      );
      return ExitCodes.BAD_INPUT;
    }
    const questions = approvalQuestions(plan.approved, plan.recorded.length, live.file);
    if (!(await confirmEach(questions, io))) {
      io.stderr.write('not approved; nothing was written\n');
      return ExitCodes.DECLINED;
    }
  }
  const written = await rewritePinFile(live.file, plan, { expected: live.text });
  // The definitions just approved: say which of their schemas the gateway cannot check against.
  reportUncheckedSchemas(
    Object.fromEntries(
      Object.entries(written.definitions).filter(([key]) => Object.hasOwn(plan.definitions.set, key)),
    ),
    (line) => io.stderr.write(line),
  );
  io.stdout.write(
    `approved: wrote ${live.file}\n  catalog ${live.server.pin.catalog} -> ${written.pin.catalog}\n`,
  );
  return ExitCodes.OK;
}

/**
 * `toolpin approve <pin-file>`: shows the drift of the live catalog and, once confirmed, rewrites
 * the pin; exit 0 approved (or nothing to approve), 1 declined, 2 bad input or cannot tell.
 */
export async function runApprove(options: ApproveCommandOptions, io: CliIo): Promise<number> {
  try {
    return await approve(options, io);
  } catch (error) {
    if (error instanceof GatewayError) {
      const what = error.code === 'GW_CATALOG_UNAVAILABLE' ? 'cannot tell' : error.code;
      io.stderr.write(`toolpin approve: ${what}: ${error.message}; nothing was written\n`);
      return ExitCodes.BAD_INPUT;
    }
    return reportInputError('approve', error, io);
  }
}

/** Registers `toolpin approve` on the program: parses the arguments and hands them to {@link runApprove}. */
export function registerApproveCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  const command = program
    .command('approve')
    .description(
      'explain how the live catalog differs from the pin, then rewrite the pin for all or the named tools once confirmed',
    )
    .argument('<pin-file>', 'pin file (YAML or JSON); rewritten atomically, comments and order kept')
    .option('--tool <name>', 'approve only this tool (repeatable; a rename moves both names)', collect, [])
    .option('--low', 'approve every low-severity drift at once (high ones are listed, to approve one by one)')
    .option('-y, --yes', 'approve without asking (required when stdin is not a terminal)');
  addListingOptions(command).action(async (file: string, options: Omit<ApproveCommandOptions, 'file'>) =>
    done(await runApprove({ ...options, file }, io)),
  );
}
