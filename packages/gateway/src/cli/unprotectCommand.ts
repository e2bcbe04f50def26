import { existsSync } from 'node:fs';
import { readFile, unlink } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { ExitCodes } from '../defaults.js';
import { parseClientConfig } from './clientConfig.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { managedGateway, readGatewayPorts, routedPin } from './managedGateway.js';
import { configPathOf, configsOf } from './clientConfigFiles.js';
import { readConfigText } from './clientConfigText.js';
import {
  backupFileOf,
  configDigest,
  readProtectState,
  refuseLinkedSideFile,
  stateFileOf,
  unprotectedText,
} from './protectState.js';

/** Options of {@link runUnprotect}, as given on the command line. */
export interface UnprotectCommandOptions {
  /** The client config `toolpin protect` rewrote, or a client's name (claude, cursor, vscode). */
  readonly config?: string;
  /** Every client config found at its usual path. */
  readonly all?: boolean;
  /** The pin folder protect used (its gateway's routes are recognized). @default ~/.toolpin */
  readonly dir?: string;
  /** Restore the backup even over changes made since protect. */
  readonly force?: boolean;
}

/** The names of the entries that run through toolpin now (wrapped, or routed through the managed gateway). */
async function protectedNames(text: string, config: string, dir: string | undefined): Promise<string[]> {
  const script = fileURLToPath(new URL('./main.js', import.meta.url));
  const gateway = managedGateway(dir);
  const ports = await readGatewayPorts(gateway).catch(() => undefined);
  return parseClientConfig(text, config, script)
    .servers.filter(
      (server) =>
        server.kind === 'wrapped' ||
        (server.kind === 'http' && routedPin(server.http.url, ports, gateway) !== undefined),
    )
    .map((server) => server.name);
}

async function unprotectOne(file: string, options: UnprotectCommandOptions, io: CliIo): Promise<number> {
  const config = await configPathOf(file);
  const backup = backupFileOf(config);
  await refuseLinkedSideFile(backup);
  await refuseLinkedSideFile(stateFileOf(config));
  if (!existsSync(backup))
    throw new CliInputError(
      `${config}: no backup ${backup} to restore (was it protected by toolpin protect?)`,
    );
  const original = await readConfigText(backup);
  const current = await readFile(config).catch(() => undefined);
  const state = await readProtectState(config);
  if (current === undefined || options.force === true || state.digest === configDigest(current)) {
    // As protect found it, byte for byte.
    await writeFileAtomic(config, original.text);
  } else {
    // The client rewrote it since: protect's own entries are undone, every other change kept.
    const { text } = await readConfigText(config);
    const key = parseClientConfig(original.text, backup, '').key;
    const names = await protectedNames(text, config, options.dir);
    const merged = unprotectedText(text, original.text, key, state.written, names);
    await writeFileAtomic(config, merged.text);
    io.stderr.write(
      `${config}: changed since toolpin protect wrote it: protect's entries undone, the other changes kept\n`,
    );
    for (const name of merged.left)
      io.stderr.write(`${name}: changed by hand since protect, left as it is (its pin is kept)\n`);
  }
  await unlink(stateFileOf(config)).catch(() => undefined);
  await unlink(backup);
  io.stderr.write(`${config}: restored from ${backup} (the pin files are kept)\n`);
  return ExitCodes.OK;
}

async function unprotect(options: UnprotectCommandOptions, io: CliIo): Promise<number> {
  const configs = configsOf(options, 'unprotect');
  let code: number = ExitCodes.OK;
  for (const { label, file } of configs) {
    if (label !== undefined) io.stderr.write(`${label}: ${file}\n`);
    if (options.all === true && !existsSync(backupFileOf(await configPathOf(file)))) {
      io.stderr.write(`${file}: not protected, nothing to restore\n`);
      continue;
    }
    const done = await unprotectOne(file, options, io).catch((error: unknown) =>
      reportInputError('unprotect', error, io),
    );
    code = Math.max(code, done);
  }
  return code;
}

/**
 * `toolpin unprotect <client-config | claude | cursor | vscode>` or `--all`: restores each config
 * `toolpin protect` rewrote from its backup, byte for byte, and removes the backup. A config the
 * client rewrote since is merged: protect's own entries are undone, every other change kept
 * (`force`: the backup is restored over them).
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
    .argument('[client-config]', 'the config toolpin protect rewrote; or claude, cursor, vscode')
    .option('--all', 'every client config found at its usual path')
    .option('--dir <folder>', 'the pin folder protect used (default ~/.toolpin)')
    .option('--force', 'restore the backup even over changes made since protect')
    .action(async (config: string | undefined, options: Omit<UnprotectCommandOptions, 'config'>) =>
      done(await runUnprotect({ ...options, ...(config === undefined ? {} : { config }) }, io)),
    );
}
