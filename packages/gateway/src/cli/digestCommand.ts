import { TRACE_PROFILE, type CatalogDigestResult } from '@toolpin/digest';
import type { Command } from 'commander';
import { reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { digestTools } from './digestTools.js';
import { readDocument } from './readDocument.js';
import { toolsFromDocument } from './toolsFromDocument.js';

/** Options of {@link runDigest}. */
export interface DigestCommandOptions {
  /** The JSON file holding the catalog. */
  readonly file: string;
  /** @default TRACE_PROFILE */
  readonly profile?: string;
  /** Print `{"profile","catalog","tools"}` as JSON instead of a table. */
  readonly json?: boolean;
}

/** A readable table: one row per folded entry (key, digest, name), then the catalog line. */
export function formatDigestTable(result: CatalogDigestResult): string {
  const names = new Map<string, string[]>();
  for (const tool of result.tools) {
    const list = names.get(tool.key) ?? [];
    list.push(tool.name ?? '(unnamed)');
    names.set(tool.key, list);
  }
  const rows = Object.entries(result.entries).map(([key, digest]) => [
    key,
    digest,
    names.get(key)?.join(', ') ?? '(tools beyond the first 500 keys)',
  ]);
  const width = Math.max(3, ...rows.map(([key]) => (key as string).length));
  const lines = [`${'KEY'.padEnd(width)}  ${'DIGEST'.padEnd(71)}  NAME`];
  for (const [key, digest, name] of rows) lines.push(`${(key as string).padEnd(width)}  ${digest}  ${name}`);
  lines.push(
    '',
    `profile  ${result.profile}`,
    `tools    ${result.tools.length}`,
    `catalog  ${result.catalog}`,
  );
  return lines.join('\n') + '\n';
}

/** `toolpin digest <file>`: prints the per-tool and catalog digests of a tools/list; exit 0, or 2 on bad input. */
export async function runDigest(options: DigestCommandOptions, io: CliIo): Promise<number> {
  const { file } = options;
  try {
    const result = digestTools(
      toolsFromDocument(readDocument(file), file),
      options.profile ?? TRACE_PROFILE,
      file,
    );
    io.stdout.write(
      options.json === true
        ? JSON.stringify({ profile: result.profile, catalog: result.catalog, tools: result.entries }) + '\n'
        : formatDigestTable(result),
    );
    return 0;
  } catch (error) {
    return reportInputError('digest', error, io);
  }
}

/** Registers `toolpin digest` on the program: parses the arguments and hands them to {@link runDigest}. */
export function registerDigestCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('digest')
    .description('digest a tools/list: a tools array, a tools/list result or a JSON-RPC response')
    .argument('<file>', 'JSON file holding the catalog')
    .option('--profile <label>', 'profile label carried in every preimage', TRACE_PROFILE)
    .option('--json', 'print {"profile","catalog","tools"} as JSON')
    .action(async (file: string, options: Omit<DigestCommandOptions, 'file'>) =>
      done(await runDigest({ ...options, file }, io)),
    );
}
