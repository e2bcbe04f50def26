import { existsSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import type { Command } from 'commander';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { ExitCodes } from '../defaults.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import {
  backupFileOf,
  configDigest,
  configPathOf,
  readProtectedDigest,
  refuseLinkedSideFile,
  stateFileOf,
} from './protectCommand.js';

/** Options of {@link runUnprotect}, as given on the command line. */
export interface UnprotectCommandOptions {
  /** The client config `toolpin protect` rewrote. */
  readonly config: string;
  /** Restore the backup even over changes made since protect. */
  readonly force?: boolean;
}

async function unprotect(options: UnprotectCommandOptions, io: CliIo): Promise<number> {
  const config = await configPathOf(options.config);
  const backup = backupFileOf(config);
  await refuseLinkedSideFile(backup);
  await refuseLinkedSideFile(stateFileOf(config));
  if (!existsSync(backup))
    throw new CliInputError(
      `${config}: no backup ${backup} to restore (was it protected by toolpin protect?)`,
    );
  const original = await readFile(backup);
  const current = await readFile(config).catch(() => undefined);
  if (
    current !== undefined &&
    options.force !== true &&
    (await readProtectedDigest(config)) !== configDigest(current)
  )
    throw new CliInputError(
      `${config} changed since toolpin protect wrote it; restoring ${backup} would drop those changes: rerun with --force to restore it anyway`,
    );
  const text = original.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(original)) throw new CliInputError(`${backup}: not UTF-8 text`);
  await writeFileAtomic(config, text);
  await unlink(stateFileOf(config)).catch(() => undefined);
  await unlink(backup);
  io.stderr.write(`${config}: restored from ${backup} (the pin files are kept)\n`);
  return ExitCodes.OK;
}

/**
 * `toolpin unprotect <client-config>`: restores the config `toolpin protect` rewrote from its
 * backup, byte for byte, and removes the backup. Refuses (exit 2) when the config changed since
 * protect wrote it, unless `force`.
 */
export async function runUnprotect(options: UnprotectCommandOptions, io: CliIo): Promise<number> {
  try {
    return await unprotect(options, io);
  } catch (error) {
    return reportInputError('unprotect', error, io);
  }
}

/** Registers `toolpin unprotect` on the program: hands the options to {@link runUnprotect}. */
export function registerUnprotectCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('unprotect')
    .description('restore a client config rewritten by toolpin protect from its backup, byte for byte')
    .argument('<client-config>', 'the config toolpin protect rewrote')
    .option('--force', 'restore the backup even over changes made since protect')
    .action(async (config: string, options: Omit<UnprotectCommandOptions, 'config'>) =>
      done(await runUnprotect({ ...options, config }, io)),
    );
}
