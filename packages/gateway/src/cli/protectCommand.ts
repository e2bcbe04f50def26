import { constants as fsConstants, existsSync } from 'node:fs';
import { access, copyFile, mkdir, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRACE_PROFILE } from '@toolpin/digest';
import type { Command } from 'commander';
import { createTwoFilesPatch } from 'diff';
import { moveEnvToNames, pinnedEnvValues } from '../config/pinEnvNames.js';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { DEFAULT_TIMEOUT_MS, ExitCodes } from '../defaults.js';
import { parseClientConfig, type ClientServer } from './clientConfig.js';
import { configPathOf, configsOf } from './clientConfigFiles.js';
import { readConfigText, rewriteEntry } from './clientConfigText.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { parseTimeout } from './commonOptions.js';
import {
  ensureManagedGateway,
  managedGateway,
  readGatewayPorts,
  routedPin,
  runningGatewayPid,
  type GatewayPorts,
  type ManagedGateway,
} from './managedGateway.js';
import { listForPin, writePin } from './pinCommand.js';
import { planServers, type Launcher, type Plan } from './protectPlan.js';
import {
  backupFileOf,
  configDigest,
  readProtectState,
  refuseLinkedSideFile,
  stateFileOf,
  unprotectedText,
  writeProtectState,
} from './protectState.js';

export { pinNameOf } from './protectPlan.js';

/** Options of {@link runProtect}, as given on the command line. */
export interface ProtectCommandOptions {
  /** The client config (a path), or a client's name: claude, cursor, vscode (its usual path). */
  readonly config?: string;
  /** Every client config found at its usual path (Claude Desktop, Cursor, VS Code). */
  readonly all?: boolean;
  /** Folder of the pin files (and of the managed gateway). @default ~/.toolpin */
  readonly dir?: string;
  /** Print the change as a unified diff; start no server, write nothing. */
  readonly dryRun?: boolean;
  /** The program the client runs for toolpin. @default this node and this toolpin's absolute path */
  readonly toolpinCommand?: string;
  /** Per request timeout while listing, in ms. @default 30000 */
  readonly timeout?: string;
}

// Absolute by default: desktop clients start servers with a PATH of their own (Claude Desktop on
// macOS does not read the shell profile), where a bare `toolpin` is often not found.
function launcherOf(toolpinCommand: string | undefined): Launcher {
  const script = fileURLToPath(new URL('./main.js', import.meta.url));
  if (toolpinCommand !== undefined) {
    if (toolpinCommand.trim() === '') throw new CliInputError('--toolpin-command: expected a program');
    return { command: toolpinCommand, args: [], script };
  }
  return { command: process.execPath, args: [script], script };
}

async function ensureDir(dir: string, flag: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await access(dir, fsConstants.W_OK);
  } catch (error) {
    throw new CliInputError(
      `${flag} ${dir}: cannot write pin files there (${(error as NodeJS.ErrnoException).code ?? 'error'}); choose another folder with --dir`,
    );
  }
}

/** An HTTP entry already routed through the managed gateway counts as protected, like a wrapped one. */
function withRoutes(
  servers: readonly ClientServer[],
  ports: GatewayPorts | undefined,
  gateway: ManagedGateway,
) {
  return servers.map((server): ClientServer => {
    const pin = server.kind === 'http' ? routedPin(server.http.url, ports, gateway) : undefined;
    return pin === undefined ? server : { kind: 'wrapped', name: server.name, entry: server.entry, pin };
  });
}

/** One config as protect reads it: its text now, and the text it protects (merged when the client rewrote it). */
interface Reading {
  readonly config: string;
  readonly backup: string;
  /** The config's text now. */
  readonly current: string;
  /** What protect works on: `current`, or current with protect's own entries undone (the new original). */
  readonly base: string;
  readonly rebased: boolean;
  readonly written: ReadonlyMap<string, unknown>;
}

/**
 * Reads a config and what protect recorded of it. A config changed since protect wrote it (the
 * client rewrote it, a server added by hand) is merged: protect's own entries are undone in it
 * ({@link unprotectedText}), and that text becomes the original the backup keeps.
 */
async function readForProtect(
  file: string,
  launcher: Launcher,
  gateway: ManagedGateway,
  io: CliIo,
): Promise<Reading> {
  const config = await configPathOf(file);
  const { bytes, text } = await readConfigText(config);
  const backup = backupFileOf(config);
  await refuseLinkedSideFile(backup);
  await refuseLinkedSideFile(stateFileOf(config));
  const state = await readProtectState(config);
  const plain = { config, backup, current: text, base: text, rebased: false, written: state.written };
  if (!existsSync(backup) || state.digest === configDigest(bytes)) return plain;
  const parsed = parseClientConfig(text, config, launcher.script);
  const ports = await readGatewayPorts(gateway);
  const protectedNames = withRoutes(parsed.servers, ports, gateway)
    .filter((server) => server.kind === 'wrapped')
    .map((server) => server.name);
  const original = (await readConfigText(backup)).text;
  const merged = unprotectedText(text, original, parsed.key, state.written, protectedNames);
  io.stderr.write(
    `${config}: changed since toolpin protect wrote it: merged (protect's entries are redone over the changes)\n`,
  );
  for (const name of merged.left) io.stderr.write(`${name}: changed by hand since protect, left as it is\n`);
  return { ...plain, base: merged.text, rebased: true, written: new Map() };
}

/** The text protect writes: `base` with each planned entry rewritten in place, and the entries so written. */
function protectedText(
  reading: Reading,
  key: string,
  entries: ReadonlyMap<string, { before: Record<string, unknown>; after: Record<string, unknown> }>,
) {
  let text = reading.base;
  const written = new Map(reading.written);
  for (const [name, { before, after }] of entries) {
    text = rewriteEntry(text, key, name, before, after);
    written.set(name, after);
  }
  return { text, written };
}

/** Moves the env values of wrapped entries' pins (an earlier protect's) back into the entries; the pins keep the names. */
async function migrationsOf(servers: readonly ClientServer[]) {
  const moves = new Map<
    string,
    {
      pin: string;
      values: Record<string, string>;
      before: Record<string, unknown>;
      after: Record<string, unknown>;
    }
  >();
  for (const server of servers) {
    if (server.kind !== 'wrapped' || 'url' in server.entry) continue;
    const values = await pinnedEnvValues(server.pin);
    if (values === undefined) continue;
    const env = { ...values, ...(server.entry.env as Record<string, string> | undefined) };
    moves.set(server.name, {
      pin: server.pin,
      values,
      before: server.entry,
      after: { ...server.entry, env },
    });
  }
  return moves;
}

/** What protect needs for one config run. */
interface ProtectRun {
  readonly launcher: Launcher;
  readonly gateway: ManagedGateway;
  readonly timeoutMs: number;
  readonly dryRun: boolean;
  readonly dirFlag: string;
  /** A dry run shown before the change is made (`--all`): the gateway's ports are chosen already. */
  readonly choosePorts?: boolean;
}

async function protectConfig(file: string, run: ProtectRun, io: CliIo): Promise<number> {
  const reading = await readForProtect(file, run.launcher, run.gateway, io);
  const parsed = parseClientConfig(reading.base, reading.config, run.launcher.script);
  const hasHttp = parsed.servers.some((server) => server.kind === 'http');
  const ports =
    hasHttp && (!run.dryRun || run.choosePorts === true)
      ? await ensureManagedGateway(run.gateway)
      : await readGatewayPorts(run.gateway);
  const servers = withRoutes(parsed.servers, ports, run.gateway);
  const plans = planServers(servers, {
    gateway: run.gateway,
    ports,
    configDir: dirname(reading.config),
    launcher: run.launcher,
  });
  for (const server of servers)
    if (server.kind === 'wrapped')
      io.stderr.write(
        `${server.name}: already ${'url' in server.entry ? 'routed through the toolpin gateway' : 'runs through toolpin wrap'} (${server.pin})\n`,
      );
  const migrations = await migrationsOf(servers);
  const entries = new Map<string, { before: Record<string, unknown>; after: Record<string, unknown> }>(
    migrations,
  );
  for (const plan of plans)
    if (plan.skip === undefined)
      entries.set(plan.server.name, { before: plan.server.entry, after: plan.after });
  if (run.dryRun) {
    printDryRun(plans, migrations.keys(), reading, protectedText(reading, parsed.key, entries).text, io);
    return ExitCodes.OK;
  }
  if (plans.some((plan) => !plan.reuse && plan.skip === undefined))
    await ensureDir(run.gateway.dir, run.dirFlag);
  let failed = 0;
  for (const plan of plans) {
    if (await pinPlanned(plan, run.timeoutMs, io)) continue;
    failed += 1;
    entries.delete(plan.server.name);
  }
  const next = protectedText(reading, parsed.key, entries);
  if (next.text === reading.current && !reading.rebased)
    io.stderr.write(`${reading.config}: nothing to change\n`);
  else await writeProtected(reading, next, io);
  for (const [name, move] of migrations) {
    await moveEnvToNames(move.pin, Object.keys(move.values));
    io.stderr.write(
      `${name}: its env values moved from ${move.pin} back into the client config (the pin keeps their names)\n`,
    );
  }
  if (plans.some((plan) => plan.server.kind === 'http' && entries.has(plan.server.name)))
    await noteGateway(run.gateway, io);
  return failed === 0 ? ExitCodes.OK : ExitCodes.FAILED;
}

/** Says whether the managed gateway serves the routes protect wrote, and how to start it. */
async function noteGateway(gateway: ManagedGateway, io: CliIo): Promise<void> {
  const pid = await runningGatewayPid(gateway);
  io.stderr.write(
    pid === undefined
      ? 'the HTTP servers are routed through the toolpin gateway: start it with toolpin up (or keep it running: toolpin up --service install)\n'
      : `the toolpin gateway (pid ${pid}) serves the new routes as their pins appear\n`,
  );
}

/** `--dry-run`: what protect would do to each server, and the config's change as a unified diff. */
function printDryRun(
  plans: readonly Plan[],
  migrated: Iterable<string>,
  reading: Reading,
  next: string,
  io: CliIo,
): void {
  for (const plan of plans) {
    const http =
      plan.server.kind === 'http'
        ? ` (HTTP: routed through the toolpin gateway at ${String(plan.after.url)})`
        : '';
    io.stderr.write(
      plan.skip !== undefined
        ? `${plan.server.name}: would leave it as it was: ${plan.skip}\n`
        : `${plan.server.name}: ${plan.reuse ? 'would keep the pin' : 'would pin it to'} ${plan.pinFile}${http}\n`,
    );
  }
  for (const name of migrated)
    io.stderr.write(`${name}: would move its env values from its pin back into the entry\n`);
  if (plans.some((plan) => plan.server.kind === 'http' && String(plan.after.url).includes(':0/')))
    io.stderr.write(
      'the gateway port (:0 above) is chosen when protect runs, once, and kept in gateway.yaml\n',
    );
  if (next === reading.current) io.stderr.write(`${reading.config}: nothing to change\n`);
  else
    io.stdout.write(
      createTwoFilesPatch(reading.config, reading.config, reading.current, next, 'original', 'protected'),
    );
  io.stderr.write('dry run: no server started, nothing written\n');
}

/** Pins one planned server (lists it and writes its pin, unless one is kept); false when it is left as it was. */
async function pinPlanned(plan: Plan, timeoutMs: number, io: CliIo): Promise<boolean> {
  const { server } = plan;
  if (plan.skip !== undefined) {
    io.stderr.write(`${server.name}: left as it was: ${plan.skip}\n`);
    return false;
  }
  if (plan.moveFrom !== undefined) {
    await mkdir(dirname(plan.pinFile), { recursive: true, mode: 0o700 });
    await rename(plan.moveFrom, plan.pinFile);
    io.stderr.write(
      `${server.name}: moved ${plan.moveFrom} to ${plan.pinFile} (it already pins this server)\n`,
    );
  } else if (plan.reuse) {
    io.stderr.write(`${server.name}: kept ${plan.pinFile} (it already pins this server)\n`);
    // A pin of an earlier protect holds the env values the entry now keeps: it keeps their names only.
    const values = server.kind === 'stdio' ? await pinnedEnvValues(plan.pinFile) : undefined;
    if (values !== undefined) await moveEnvToNames(plan.pinFile, Object.keys(values));
  } else if (plan.source !== undefined) {
    io.stderr.write(`${server.name}: listing ${plan.source.describe}\n`);
    try {
      const { tools, upstream, surfaces, artifact } = await listForPin(plan.source, { timeoutMs }, io);
      const pin = {
        name: plan.pinName,
        upstream,
        tools,
        surfaces,
        ...(artifact === undefined ? {} : { artifact }),
        mode: 'enforce' as const,
      };
      await writePin(
        { ...pin, profile: TRACE_PROFILE, out: plan.pinFile, describe: plan.source.describe },
        io,
      );
    } catch (error) {
      io.stderr.write(`${server.name}: cannot pin it, left as it was: ${(error as Error).message}\n`);
      return false;
    }
  }
  if (server.kind === 'http')
    io.stderr.write(`${server.name}: routed through the toolpin gateway at ${String(plan.after.url)}\n`);
  return true;
}

/** Writes the protected config (the original backed up once, or the merged original) and what protect wrote. */
async function writeProtected(
  reading: Reading,
  next: { text: string; written: ReadonlyMap<string, unknown> },
  io: CliIo,
): Promise<void> {
  const { config, backup } = reading;
  // The first backup is the original; a config the client rewrote has its merged text as the original.
  if (reading.rebased) await writeFileAtomic(backup, reading.base, 0o600);
  else if (!existsSync(backup)) await copyFile(config, backup, fsConstants.COPYFILE_EXCL);
  await writeFileAtomic(config, next.text);
  await writeProtectState(config, next.text, next.written);
  io.stderr.write(`${config}: protected (original kept in ${backup}; toolpin unprotect restores it)\n`);
}

async function protect(options: ProtectCommandOptions, io: CliIo): Promise<number> {
  const run: ProtectRun = {
    launcher: launcherOf(options.toolpinCommand),
    gateway: managedGateway(options.dir),
    timeoutMs: parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS),
    dryRun: options.dryRun === true,
    dirFlag: options.dir === undefined ? 'pin folder' : '--dir',
  };
  const configs = configsOf(options, 'protect');
  if (options.all !== true && configs.length === 1 && configs[0]?.label === undefined)
    return protectConfig(configs[0]?.file ?? '', run, io);
  let code: number = ExitCodes.OK;
  for (const { label, file } of configs) {
    io.stderr.write(`${label ?? 'config'}: ${file}\n`);
    // Each config's change is shown before it is made.
    const shown = run.dryRun
      ? ExitCodes.OK
      : await runOne(file, { ...run, dryRun: true, choosePorts: true }, io);
    const done = shown === ExitCodes.OK ? await runOne(file, run, io) : shown;
    code = Math.max(code, done);
  }
  return code;
}

async function runOne(file: string, run: ProtectRun, io: CliIo): Promise<number> {
  try {
    return await protectConfig(file, run, io);
  } catch (error) {
    return reportInputError('protect', error, io);
  }
}

/**
 * `toolpin protect <client-config | claude | cursor | vscode>` or `--all`: pins every server of a
 * desktop client's MCP config (stdio servers by running them, HTTP servers by URL), and rewrites
 * each entry in place: a stdio server runs through `toolpin wrap --pin <file>`, an HTTP server is
 * reached through the managed gateway (`toolpin up`). Exit 0; 1 when a server could not be pinned
 * (it is left as it was); 2 on bad input (the config, the folder).
 */
export async function runProtect(options: ProtectCommandOptions, io: CliIo): Promise<number> {
  try {
    return await protect(options, io);
  } catch (error) {
    return reportInputError('protect', error, io);
  }
}

/** Registers `toolpin protect` on the program: hands the options to {@link runProtect}. */
export function registerProtectCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('protect')
    .description(
      "pin every server of a desktop client's MCP config: stdio servers run through toolpin wrap, HTTP servers through the toolpin gateway (exit 0; 1 when a server could not be pinned; 2 on bad input)",
    )
    .argument(
      '[client-config]',
      'claude_desktop_config.json or an mcp.json; or claude, cursor, vscode (found at its usual path)',
    )
    .option(
      '--all',
      'every client config found at its usual path (Claude Desktop, Cursor, VS Code): each change shown, then made',
    )
    .option('--dir <folder>', 'folder of the pin files and of the toolpin gateway (default ~/.toolpin)')
    .option('--dry-run', 'print the change as a unified diff; start no server, write nothing')
    .option(
      '--toolpin-command <program>',
      "the program the client runs for toolpin (default: this node and this toolpin's absolute path), e.g. toolpin",
    )
    .option('--timeout <ms>', 'per request timeout while listing', String(DEFAULT_TIMEOUT_MS))
    .action(async (config: string | undefined, options: Omit<ProtectCommandOptions, 'config'>) =>
      done(await runProtect({ ...options, ...(config === undefined ? {} : { config }) }, io)),
    );
}
