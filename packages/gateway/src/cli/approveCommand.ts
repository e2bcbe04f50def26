import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { planPinUpdate, type PinUpdatePlan } from '../config/planPinUpdate.js';
import { PIN_SURFACES } from '../config/pinSurfaces.js';
import { formatInstructionsDrift } from '../explain/explainInstructions.js';
import { rewritePinFile, signPinText } from '../config/rewritePinFile.js';
import { readFile } from 'node:fs/promises';
import type { PinSigner } from '../config/pinSignature.js';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { loadPinSigner } from './pinSigner.js';
import type { ServerConfig } from '../config/types.js';
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
import { comparePinWithLive, type PinnedLiveCatalog } from '../transports/pinnedLiveCatalog.js';
import { readPinFileForCli } from './readPinFileForCli.js';
import type { PinnedArtifact } from '../config/types.js';
import { compareArtifacts, describeArtifact } from '../policy/artifactDrift.js';
import { reportUncheckedSchemas } from './reportUncheckedSchemas.js';
import { DEFAULT_TIMEOUT_MS, ExitCodes } from '../defaults.js';

/** Options of {@link runApprove}, as given on the command line. */
export interface ApproveCommandOptions {
  /** The pin file (YAML or JSON), rewritten atomically with comments and order kept. */
  readonly file: string;
  /** Approve only these tools (a rename moves both names). @default every drifted tool */
  readonly tool?: readonly string[];
  /** Approve only these prompts (by name; beside any --tool, --template, --instructions). */
  readonly prompt?: readonly string[];
  /** Approve only these resource templates (by uriTemplate). */
  readonly template?: readonly string[];
  /** Approve the live instructions. */
  readonly instructions?: boolean;
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
  /** Sign the approved pin with this private key (`toolpin key --new`): docs/pin-lifecycle.md#signed-approvals. */
  readonly sign?: string;
}

// A tool is named as before; a prompt or template says what it is, since names may repeat across surfaces.
function describe(entry: ToolDrift, item = ''): string {
  const name = escapeInvisible(entry.tool ?? entry.key);
  const what = item === '' ? '' : `${item} `;
  if (entry.kind === 'renamed')
    return `renamed ${what}${escapeInvisible(entry.from?.tool ?? entry.from?.key ?? '?')} -> ${name}`;
  return `${entry.kind} ${what}${name} [${entry.severity}]`;
}

/** One approved change of any surface: its line, and its severity (high ones are asked one by one). */
interface Approved {
  readonly line: string;
  readonly severity: 'high' | 'low';
  /** How to approve it alone. */
  readonly alone: string;
}

function approvedChanges(plan: PinUpdatePlan): Approved[] {
  const out: Approved[] = plan.approved.map((entry) => ({
    line: describe(entry),
    severity: entry.severity,
    alone: `--tool ${JSON.stringify(entry.tool ?? entry.key)}`,
  }));
  for (const surface of PIN_SURFACES) {
    for (const entry of plan.surfaces[surface.section]?.approved ?? []) {
      const name = entry.key.slice(surface.prefix.length);
      out.push({
        line: describe(entry, surface.item),
        severity: entry.severity,
        alone: `${surface.flag} ${JSON.stringify(surface.section === 'prompts' ? (entry.tool ?? name) : name)}`,
      });
    }
  }
  if (plan.instructionsApproved?.approved === true)
    out.push({ line: 'changed instructions [high]', severity: 'high', alone: '--instructions' });
  return out;
}

/** The explanation of every surface the plan compared, in the layout of `check`. */
function formatPlan(plan: PinUpdatePlan): string {
  let text = formatDriftExplanation(plan.explanation);
  for (const surface of PIN_SURFACES) {
    const part = plan.surfaces[surface.section];
    if (part !== undefined && !part.explanation.equal)
      text +=
        `${surface.items}\n` +
        formatDriftExplanation(part.explanation, { item: surface.item, items: surface.items });
  }
  if (plan.instructionsApproved !== undefined)
    text += formatInstructionsDrift(plan.instructionsApproved.drift);
  return text;
}

// Under --low the high drift is left for review: each one named with how to approve it alone.
function highLeftOver(plan: PinUpdatePlan): string {
  const all: Approved[] = approvedChanges({
    ...plan,
    approved: plan.explanation.drift,
    surfaces: Object.fromEntries(
      Object.entries(plan.surfaces).map(([section, part]) => [
        section,
        { ...part, approved: part.explanation.drift },
      ]),
    ),
    ...(plan.instructionsApproved === undefined
      ? {}
      : { instructionsApproved: { ...plan.instructionsApproved, approved: true } }),
  });
  const high = all.filter((entry) => entry.severity === 'high');
  if (high.length === 0) return '';
  const lines = high.map((entry) => `  ${entry.line}: review it, then toolpin approve ${entry.alone}\n`);
  return `high-severity drift is approved one item at a time, never with --low:\n${lines.join('')}`;
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
function approvalQuestions(approved: readonly Approved[], others: number, file: string): string[] {
  const high = approved.filter((entry) => entry.severity === 'high');
  const rest = approved.length - high.length + others;
  return [
    ...high.map((entry) => `Approve ${entry.line}? [y/N] `),
    ...(rest > 0 ? [`Approve ${rest} other change(s) and rewrite ${file}? [y/N] `] : []),
  ];
}

async function approve(options: ApproveCommandOptions, io: CliIo): Promise<number> {
  const headers = parseHeaderOptions(options.header);
  const timeout = parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS);
  const signer = options.sign === undefined ? undefined : await loadPinSigner(options.sign);
  const pinFile = await readPinFileForCli(options.file);
  const capabilities = parseCapabilities(options.capabilities);
  const live = await comparePinWithLive(pinFile, headers, { timeoutMs: timeout, capabilities });
  warnUnapprovable(live, io);
  const lowOnly = options.low === true;
  const planned = planPinUpdate(live.server, live.observed, options.tool, {
    lowOnly,
    ...(options.prompt === undefined ? {} : { prompts: options.prompt }),
    ...(options.template === undefined ? {} : { templates: options.template }),
    ...(options.instructions === true ? { instructions: true } : {}),
  });
  if (!planned.ok) throw new CliInputError(planned.message);
  const whole = [options.tool, options.prompt, options.template].every((names) => (names ?? []).length === 0);
  const artifact = artifactApproval(live, { whole: whole && options.instructions !== true, lowOnly }, io);
  const plan: PinUpdatePlan =
    artifact === undefined
      ? planned.plan
      : { ...planned.plan, pin: { ...planned.plan.pin, artifact: artifact.to } };
  const leftOver = lowOnly ? highLeftOver(plan) : '';
  const approved = [...approvedChanges(plan), ...(artifact === undefined ? [] : [artifact.approved])];
  if (approved.length === 0 && plan.recorded.length === 0) {
    const why = lowOnly
      ? `no low-severity drift in the live catalog of ${live.server.name}`
      : `the live catalog of ${live.server.name} matches ${live.file}`;
    io.stdout.write(`nothing to approve: ${why}\n${leftOver}`);
    // The pin as it is, reviewed against the live server: signed as it stands.
    if (signer !== undefined) await signAsItIs(live, signer, io);
    return ExitCodes.OK;
  }
  io.stdout.write(formatPlan(plan));
  if (artifact !== undefined) io.stdout.write(`${artifact.approved.line}\n`);
  io.stdout.write(leftOver);
  const changes = [...approved.map((entry) => entry.line), ...plan.recorded.map(describeRecorded)];
  io.stdout.write(`to approve in ${live.file}:\n${changes.map((change) => `  ${change}\n`).join('')}`);
  if (options.yes !== true) {
    const refused = await confirmApproval(approved, plan, live.file, io);
    if (refused !== undefined) return refused;
  }
  const written = await rewritePinFile(live.file, plan, {
    expected: live.text,
    ...(signer === undefined ? {} : { sign: signer.sign }),
  });
  reportApproved(live, plan, written, io);
  if (signer !== undefined) io.stdout.write(`  signed by ${signer.kid}\n`);
  else if (
    live.server.signedBy !== undefined ||
    /^signature:/m.test(live.text) ||
    /"signature":/.test(live.text)
  )
    io.stderr.write(
      'note: the signature was removed (it signed the content before); sign again with --sign <key>\n',
    );
  return ExitCodes.OK;
}

/**
 * The artifact a whole approval records (docs/pin-lifecycle.md#the-artifact): the one the command
 * resolves to (or the HTTP server states) now, when it differs from the pin's or the pin has none;
 * `--low` records it only when its drift is low (a server's stated name and version). An approval
 * of named items leaves it, and says so; a pinned artifact that cannot be resolved now cannot be approved.
 */
function artifactApproval(
  live: PinnedLiveCatalog,
  scope: { readonly whole: boolean; readonly lowOnly: boolean },
  io: CliIo,
): { to: PinnedArtifact; approved: Approved } | undefined {
  const artifact = live.artifact;
  if (artifact === undefined) return undefined;
  if (artifact.observed === undefined) {
    if (artifact.pinned !== undefined)
      throw new CliInputError(
        `cannot tell: the artifact cannot be resolved: ${artifact.problem ?? 'unknown'}`,
      );
    io.stderr.write(`note: the artifact is not recorded: ${artifact.problem ?? 'unknown'}\n`);
    return undefined;
  }
  const comparison = artifact.comparison;
  if (comparison?.equal === true) return undefined;
  // Recorded where none was pinned: a server's stated name and version is asked with the other changes.
  const severity = comparison?.severity ?? (artifact.observed.kind === 'server' ? 'low' : 'high');
  if (!scope.whole || (scope.lowOnly && (comparison === undefined || severity === 'high'))) {
    io.stderr.write(
      `note: the artifact differs from the pin (${describeArtifact(artifact.observed)}); approve it with toolpin approve ${live.file} (no --tool, --prompt, --template, --instructions or --low)\n`,
    );
    return undefined;
  }
  const line =
    comparison === undefined
      ? `pin the artifact ${describeArtifact(artifact.observed)}`
      : `artifact_drifted ${comparison.summary} [${severity}]`;
  return { to: artifact.observed, approved: { line, severity, alone: '' } };
}

/** `approve --sign` with nothing to approve: the file's content signed as it stands (only if unchanged since read). */
async function signAsItIs(
  live: PinnedLiveCatalog,
  signer: { sign: PinSigner; kid: string },
  io: CliIo,
): Promise<void> {
  const { text } = await signPinText(live.text, live.file, signer.sign);
  if ((await readFile(live.file, 'utf8')) !== live.text)
    throw new GatewayError(
      'GW_PIN_FILE_CHANGED',
      `Pin file ${live.file} changed since it was read; nothing was written`,
      {
        file: live.file,
      },
    );
  await writeFileAtomic(live.file, text);
  io.stdout.write(`signed ${live.file} by ${signer.kid}\n`);
}

/** Warns of the items that cannot be approved, and notes the surfaces the pin leaves unpinned. */
function warnUnapprovable(live: PinnedLiveCatalog, io: CliIo): void {
  for (const tool of live.observed.unverifiable) {
    io.stderr.write(
      `warning: ${escapeInvisible(tool.name ?? `${tool.surface ?? 'tools'}[${tool.index}]`)} has no digest and cannot be approved: ${tool.problem}\n`,
    );
  }
  for (const surface of live.notPinned)
    io.stderr.write(
      `note: the pin does not pin ${surface}; approve leaves it unpinned (toolpin pin records it)\n`,
    );
}

/** Asks on the terminal; the exit code when the pin must not be rewritten, else undefined. */
async function confirmApproval(
  approved: readonly Approved[],
  plan: PinUpdatePlan,
  file: string,
  io: CliIo,
): Promise<number | undefined> {
  if (io.stdin.isTTY !== true) {
    io.stderr.write(
      'toolpin approve: refusing to rewrite the pin without --yes when stdin is not a terminal; nothing was written\n',
    );
    return ExitCodes.BAD_INPUT;
  }
  const questions = approvalQuestions(approved, plan.recorded.length, file);
  if (!(await confirmEach(questions, io))) {
    io.stderr.write('not approved; nothing was written\n');
    return ExitCodes.DECLINED;
  }
  return undefined;
}

/** Says what was written: the schemas of the approved definitions it cannot check, each digest before and after. */
function reportApproved(
  live: PinnedLiveCatalog,
  plan: PinUpdatePlan,
  written: ServerConfig,
  io: CliIo,
): void {
  // The definitions just approved: say which of their schemas the gateway cannot check against.
  reportUncheckedSchemas(
    Object.fromEntries(
      Object.entries(written.definitions).filter(([key]) => Object.hasOwn(plan.definitions.set, key)),
    ),
    (line) => io.stderr.write(line),
  );
  let summary = `approved: wrote ${live.file}\n  catalog ${live.server.pin.catalog} -> ${written.pin.catalog}\n`;
  const before = live.server.pin.artifact;
  const after = written.pin.artifact;
  if (after !== undefined && (before === undefined || !compareArtifacts(before, after).equal))
    summary += `  artifact ${before === undefined ? '-' : describeArtifact(before)} -> ${describeArtifact(after)}\n`;
  for (const surface of PIN_SURFACES) {
    const before = live.server.pin[surface.section]?.catalog;
    const after = written.pin[surface.section]?.catalog;
    if (before !== after) summary += `  ${surface.items} ${before ?? '-'} -> ${after ?? '-'}\n`;
  }
  if (live.server.pin.instructions !== written.pin.instructions)
    summary += `  instructions ${live.server.pin.instructions ?? '-'} -> ${written.pin.instructions ?? '-'}\n`;
  io.stdout.write(summary);
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
      'explain how the live catalog (tools, prompts, resource templates, instructions) differs from the pin, then rewrite the pin for all or the named items once confirmed',
    )
    .argument('<pin-file>', 'pin file (YAML or JSON); rewritten atomically, comments and order kept')
    .option('--tool <name>', 'approve only this tool (repeatable; a rename moves both names)', collect, [])
    .option('--prompt <name>', 'approve only this prompt (repeatable; beside --tool)', collect, [])
    .option('--template <uriTemplate>', 'approve only this resource template (repeatable)', collect, [])
    .option('--instructions', "approve the server's live instructions")
    .option('--low', 'approve every low-severity drift at once (high ones are listed, to approve one by one)')
    .option('-y, --yes', 'approve without asking (required when stdin is not a terminal)')
    .option(
      '--sign <private-key>',
      'sign the approved pin with this key (toolpin key --new); the gateway can require it',
    );
  addListingOptions(command).action(async (file: string, options: Omit<ApproveCommandOptions, 'file'>) =>
    done(await runApprove({ ...options, file }, io)),
  );
}
