import { createHash } from 'node:crypto';
import { constants as fsConstants, existsSync, readFileSync } from 'node:fs';
import { access, copyFile, lstat, mkdir, readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRACE_PROFILE } from '@toolpin/digest';
import type { Command } from 'commander';
import { createTwoFilesPatch } from 'diff';
import { isStdioUpstream, parsePinFile, type PinFileInput, type UpstreamConfig } from '../config/index.js';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { DEFAULT_TIMEOUT_MS, ExitCodes } from '../defaults.js';
import { redactUrl } from '../wire/redactUrl.js';
import {
  formatJson,
  isClientVariable,
  jsonLayout,
  parseClientConfig,
  type ClientConfig,
  type ClientServer,
  type HttpEntry,
  type StdioEntry,
} from './clientConfig.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { parseTimeout } from './commonOptions.js';
import { listForPin, writePin, type LiveSource } from './pinCommand.js';

/** Options of {@link runProtect}, as given on the command line. */
export interface ProtectCommandOptions {
  /** The client config: claude_desktop_config.json, Cursor's or VS Code's mcp.json. */
  readonly config: string;
  /** Folder of the pin files. @default ~/.toolpin */
  readonly dir?: string;
  /** Print the change as a unified diff; start no server, write nothing. */
  readonly dryRun?: boolean;
  /** The program the client runs for toolpin. @default this node and this toolpin's absolute path */
  readonly toolpinCommand?: string;
  /** Per request timeout while listing, in ms. @default 30000 */
  readonly timeout?: string;
}

/** Where protect keeps the original config, byte for byte: beside it. */
export function backupFileOf(config: string): string {
  return `${config}.toolpin-backup`;
}

/** Where protect records what it wrote (the SHA-256 of the config), so unprotect can tell a later edit. */
export function stateFileOf(config: string): string {
  return `${config}.toolpin-state.json`;
}

/**
 * The config's own path: a symlink (a dotfiles manager's) is followed, so the rewrite and the
 * backup land beside the real file and the link stays a link.
 */
export async function configPathOf(file: string): Promise<string> {
  const absolute = resolve(file);
  return realpath(absolute).catch(() => absolute);
}

/**
 * Refuses a file protect keeps beside the config (the backup, the state file) that is a symlink
 * or anything but a regular file: a repository can ship `.vscode/mcp.json.toolpin-state.json`
 * pointing at `~/.bashrc`, and writing or restoring through it would change or leak that file.
 * Checked before anything is written; the writes themselves replace the path, never follow it.
 */
export async function refuseLinkedSideFile(file: string): Promise<void> {
  const stats = await lstat(file).catch(() => undefined);
  if (stats === undefined || stats.isFile()) return;
  const what = stats.isSymbolicLink() ? 'a symlink' : 'not a regular file';
  throw new CliInputError(
    `${file}: ${what}; toolpin never writes or reads its own files through one: remove it, then run again`,
  );
}

/** The SHA-256 of a config's bytes, as the state file records it. */
export function configDigest(bytes: Buffer | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The protected config's digest recorded by protect, or undefined when there is no readable state. */
export async function readProtectedDigest(config: string): Promise<string | undefined> {
  const text = await readFile(stateFileOf(config), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const state = JSON.parse(text) as { protected?: unknown };
    return typeof state.protected === 'string' ? state.protected : undefined;
  } catch {
    return undefined;
  }
}

/** The command a client runs to start toolpin: `[program, ...args]` before `wrap`. */
interface Launcher {
  readonly command: string;
  readonly args: readonly string[];
  /** This toolpin's script, recognized in entries already wrapped. */
  readonly script: string;
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

/** Reads the config's bytes as UTF-8 text, exactly: a text that would not write back the same bytes is refused. */
async function readConfigText(file: string): Promise<{ bytes: Buffer; text: string }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new CliInputError(`${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) throw new CliInputError(`${file}: not UTF-8 text`);
  return { bytes, text };
}

/** A server name as a pin's name and file name: letters, digits, `_`, `.`, `-`, starting alphanumeric. */
export function pinNameOf(name: string): string {
  const safe = name
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 56)
    .replace(/[-.]+$/, '');
  return safe === '' ? 'server' : safe;
}

function stdioArgv(upstream: { command: string | readonly string[]; args?: readonly string[] }): string[] {
  const command = typeof upstream.command === 'string' ? [upstream.command] : [...upstream.command];
  return [...command, ...(upstream.args ?? [])];
}

/** True when the pin file at `file` pins this very upstream (same argv, env and cwd; or same URL). */
function pinsSameUpstream(file: string, upstream: PinFileInput['upstream']): boolean {
  let pinned: UpstreamConfig;
  try {
    pinned = parsePinFile(readFileSync(file, 'utf8'), file).upstream;
  } catch {
    return false;
  }
  if ('url' in upstream) return !isStdioUpstream(pinned) && pinned.url === upstream.url;
  if (!isStdioUpstream(pinned)) return false;
  return (
    JSON.stringify(stdioArgv(pinned)) === JSON.stringify(stdioArgv(upstream)) &&
    JSON.stringify(Object.entries(pinned.env).sort()) ===
      JSON.stringify(Object.entries(upstream.env ?? {}).sort()) &&
    pinned.cwd === upstream.cwd
  );
}

/** What protect does with one server. */
interface Plan {
  readonly server: ClientServer;
  readonly pinName: string;
  readonly pinFile: string;
  /** A pin of this very upstream is already in the folder: kept, the server is not started. */
  readonly reuse: boolean;
  readonly source?: LiveSource;
  /** The entry after protect (the same entry for an HTTP server). */
  readonly after: Record<string, unknown>;
  /** Why the server is left as it was without being started. */
  readonly skip?: string;
}

/**
 * A stdio server's pin records its program, arguments, environment and folder, so `wrap`, `check`
 * and `approve` start it as the client did. Values the client substitutes at launch (`${input:…}`,
 * `${workspaceFolder}`) stay in the entry: the client passes them to wrap, wrap to the server.
 */
function stdioPlan(launch: StdioEntry, configDir: string) {
  const pinEnv: Record<string, string> = {};
  const clientEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(launch.env))
    (isClientVariable(value) ? clientEnv : pinEnv)[name] = value;
  const pinCwd =
    launch.cwd === undefined || isClientVariable(launch.cwd) ? undefined : resolve(configDir, launch.cwd);
  const upstream = {
    command: launch.command,
    args: [...launch.args],
    env: pinEnv,
    ...(pinCwd === undefined ? {} : { cwd: pinCwd }),
  };
  const source: LiveSource = {
    upstream,
    target: {
      command: [launch.command],
      args: launch.args,
      env: pinEnv,
      ...(pinCwd === undefined ? {} : { cwd: pinCwd }),
    },
    describe: `stdio: ${launch.command}`,
  };
  return { upstream, source, clientEnv, keepCwd: launch.cwd !== undefined && pinCwd === undefined };
}

function httpSource(http: HttpEntry): LiveSource {
  return {
    // Headers are sent while listing, never written to the pin (they stay in the client config).
    upstream: { url: http.url, ...(http.transport === undefined ? {} : { transport: http.transport }) },
    target: { url: http.url, headers: http.headers, transport: http.transport ?? 'auto' },
    describe: redactUrl(http.url),
  };
}

/** The wrapped entry: every key in its place, `command`/`args` through toolpin, the env the client must still pass. */
function wrappedEntry(
  entry: Record<string, unknown>,
  launcher: Launcher,
  pinFile: string,
  clientEnv: Record<string, string>,
  keepCwd: boolean,
): Record<string, unknown> {
  const args = [...launcher.args, 'wrap', '--pin', pinFile];
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'command') {
      out.command = launcher.command;
      out.args = args;
    } else if (key === 'args') continue;
    else if (key === 'env') {
      if (Object.keys(clientEnv).length > 0) out.env = clientEnv;
    } else if (key === 'cwd') {
      if (keepCwd) out.cwd = value;
    } else out[key] = value;
  }
  return out;
}

function planServers(
  servers: readonly ClientServer[],
  dir: string,
  configDir: string,
  launcher: Launcher,
): Plan[] {
  const taken = new Set(
    servers.flatMap((server) => (server.kind === 'wrapped' ? [resolve(server.pin)] : [])),
  );
  const plans: Plan[] = [];
  for (const server of servers) {
    if (server.kind === 'wrapped') continue;
    // A client variable in the command line is resolved by the client at launch, and a pin records
    // what runs: it cannot be pinned for the client (a value in `env` can: it stays in the entry).
    if (
      server.kind === 'stdio' &&
      [server.launch.command, ...server.launch.args].some((part) => isClientVariable(part))
    ) {
      const pinName = pinNameOf(server.name);
      const skip =
        'its command or args use a variable the client substitutes (${…}); pin and wrap it by hand';
      plans.push({
        server,
        pinName,
        pinFile: join(dir, `${pinName}.yaml`),
        reuse: false,
        after: server.entry,
        skip,
      });
      continue;
    }
    const stdio = server.kind === 'stdio' ? stdioPlan(server.launch, configDir) : undefined;
    const source = stdio?.source ?? httpSource((server as Extract<ClientServer, { kind: 'http' }>).http);
    const base = pinNameOf(server.name);
    let pinName = base;
    let pinFile = join(dir, `${pinName}.yaml`);
    let reuse = false;
    for (let n = 2; n < 1000; n += 1) {
      if (!taken.has(pinFile)) {
        if (!existsSync(pinFile)) break;
        if (pinsSameUpstream(pinFile, source.upstream)) {
          reuse = true;
          break;
        }
      }
      pinName = `${base.slice(0, 56)}-${n}`;
      pinFile = join(dir, `${pinName}.yaml`);
    }
    taken.add(pinFile);
    const after =
      stdio === undefined
        ? server.entry
        : wrappedEntry(server.entry, launcher, pinFile, stdio.clientEnv, stdio.keepCwd);
    plans.push({ server, pinName, pinFile, reuse, source, after });
  }
  return plans;
}

function rewritten(
  document: Record<string, unknown>,
  key: string,
  entries: ReadonlyMap<string, Record<string, unknown>>,
): Record<string, unknown> {
  const servers = document[key] as Record<string, unknown>;
  const next: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(servers)) next[name] = entries.get(name) ?? entry;
  return { ...document, [key]: next };
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

/** The config's text with the protected entries; the text itself when there is nothing to wrap (its own layout kept). */
function protectedText(
  parsed: ClientConfig,
  entries: ReadonlyMap<string, Record<string, unknown>>,
  text: string,
): string {
  return entries.size === 0
    ? text
    : formatJson(rewritten(parsed.document, parsed.key, entries), jsonLayout(text));
}

async function protect(options: ProtectCommandOptions, io: CliIo): Promise<number> {
  const config = await configPathOf(options.config);
  const launcher = launcherOf(options.toolpinCommand);
  const timeoutMs = parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS);
  const dir = resolve(options.dir ?? join(homedir(), '.toolpin'));
  const { bytes, text } = await readConfigText(config);
  const parsed = parseClientConfig(text, config, launcher.script);
  const backup = backupFileOf(config);
  await refuseLinkedSideFile(backup);
  await refuseLinkedSideFile(stateFileOf(config));
  if (existsSync(backup) && (await readProtectedDigest(config)) !== configDigest(bytes))
    throw new CliInputError(
      `${config} changed since toolpin protect wrote it: run toolpin unprotect first (--force restores ${backup} over the changes), or delete ${backup} to protect the config as it is now`,
    );
  const plans = planServers(parsed.servers, dir, dirname(config), launcher);
  for (const server of parsed.servers)
    if (server.kind === 'wrapped')
      io.stderr.write(`${server.name}: already runs through toolpin wrap (${server.pin})\n`);
  // Only the entries protect rewrites (stdio): an HTTP entry stays as it is.
  const entries = new Map(
    plans.filter((plan) => plan.after !== plan.server.entry).map((plan) => [plan.server.name, plan.after]),
  );
  if (options.dryRun === true) {
    printDryRun(plans, config, text, protectedText(parsed, entries, text), io);
    return ExitCodes.OK;
  }
  if (plans.some((plan) => !plan.reuse))
    await ensureDir(dir, options.dir === undefined ? 'pin folder' : '--dir');
  let failed = 0;
  for (const plan of plans) {
    if (await pinPlanned(plan, timeoutMs, io)) continue;
    failed += 1;
    entries.delete(plan.server.name);
  }
  const next = protectedText(parsed, entries, text);
  if (next === text) io.stderr.write(`${config}: nothing to change\n`);
  else await writeProtected(config, backup, next, io);
  return failed === 0 ? ExitCodes.OK : ExitCodes.FAILED;
}

/** `--dry-run`: what protect would do to each server, and the config's change as a unified diff. */
function printDryRun(plans: readonly Plan[], config: string, text: string, next: string, io: CliIo): void {
  for (const plan of plans)
    io.stderr.write(
      plan.skip !== undefined
        ? `${plan.server.name}: would leave it as it was: ${plan.skip}\n`
        : `${plan.server.name}: ${plan.reuse ? 'would keep the pin' : 'would pin it to'} ${plan.pinFile}${plan.server.kind === 'http' ? ' (HTTP: the entry stays as it is)' : ''}\n`,
    );
  if (next === text) io.stderr.write(`${config}: nothing to change\n`);
  else io.stdout.write(createTwoFilesPatch(config, config, text, next, 'original', 'protected'));
  io.stderr.write('dry run: no server started, nothing written\n');
}

/** Pins one planned server (lists it and writes its pin, unless one is kept); false when it is left as it was. */
async function pinPlanned(plan: Plan, timeoutMs: number, io: CliIo): Promise<boolean> {
  const { server } = plan;
  if (plan.skip !== undefined) {
    io.stderr.write(`${server.name}: left as it was: ${plan.skip}\n`);
    return false;
  }
  if (plan.reuse) {
    io.stderr.write(`${server.name}: kept ${plan.pinFile} (it already pins this server)\n`);
  } else if (plan.source !== undefined) {
    io.stderr.write(`${server.name}: listing ${plan.source.describe}\n`);
    try {
      const { tools, upstream, surfaces, artifact } = await listForPin(plan.source, { timeoutMs }, io);
      await writePin(
        {
          name: plan.pinName,
          upstream,
          tools,
          surfaces,
          ...(artifact === undefined ? {} : { artifact }),
          mode: 'enforce',
          profile: TRACE_PROFILE,
          out: plan.pinFile,
          describe: plan.source.describe,
        },
        io,
      );
    } catch (error) {
      io.stderr.write(`${server.name}: cannot pin it, left as it was: ${(error as Error).message}\n`);
      return false;
    }
  }
  if (server.kind === 'http')
    io.stderr.write(
      `${server.name}: HTTP server pinned, its entry left as it is; to enforce the pin, serve ${plan.pinFile} with toolpin serve and point the client at its route (docs/desktop.md#http-servers)\n`,
    );
  return true;
}

/** Writes the protected config (the original backed up once) and the digest unprotect checks. */
async function writeProtected(config: string, backup: string, next: string, io: CliIo): Promise<void> {
  // The first backup is the original: a later protect of the config it wrote keeps it.
  if (!existsSync(backup)) await copyFile(config, backup, fsConstants.COPYFILE_EXCL);
  await writeFileAtomic(config, next);
  await writeFileAtomic(stateFileOf(config), `${JSON.stringify({ protected: configDigest(next) })}\n`);
  io.stderr.write(`${config}: protected (original kept in ${backup}; toolpin unprotect restores it)\n`);
}

/**
 * `toolpin protect <client-config>`: pins every server of a desktop client's MCP config (stdio
 * servers by running them, HTTP servers by URL) into one pin file each, and rewrites the config so
 * each stdio server runs through `toolpin wrap --pin <file>`. Exit 0; 1 when a server could not be
 * pinned (it is left as it was); 2 on bad input (the config, the folder).
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
      "pin every server of a desktop client's MCP config and run its stdio servers through toolpin wrap (exit 0; 1 when a server could not be pinned; 2 on bad input)",
    )
    .argument('<client-config>', 'claude_desktop_config.json, or a Cursor / VS Code mcp.json')
    .option('--dir <folder>', 'folder of the pin files (default ~/.toolpin)')
    .option('--dry-run', 'print the change as a unified diff; start no server, write nothing')
    .option(
      '--toolpin-command <program>',
      "the program the client runs for toolpin (default: this node and this toolpin's absolute path), e.g. toolpin",
    )
    .option('--timeout <ms>', 'per request timeout while listing', String(DEFAULT_TIMEOUT_MS))
    .action(async (config: string, options: Omit<ProtectCommandOptions, 'config'>) =>
      done(await runProtect({ ...options, config }, io)),
    );
}
