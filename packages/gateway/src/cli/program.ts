import { Command, CommanderError } from 'commander';
import { CLIENT_INFO, ExitCodes } from '../defaults.js';
import type { CliIo } from './cliIo.js';
import { stopOnSignal } from './stopOnSignal.js';

/** A command's registration (`register<Name>Command`): declares its options, hands them to its `run`. */
type RegisterCommand = (program: Command, io: CliIo, done: (code: number) => void) => void;

/**
 * Every command, in the order `toolpin --help` lists them, each loaded with its own module only when
 * needed: a `toolpin wrap` child that a desktop client starts does not load serve's HTTP ingress or
 * pin's live listing (it starts in about half the CPU time of loading them all).
 */
const COMMANDS: Readonly<Record<string, () => Promise<RegisterCommand>>> = {
  digest: async () => (await import('./digestCommand.js')).registerDigestCommand,
  key: async () => (await import('./keyCommand.js')).registerKeyCommand,
  diff: async () => (await import('./diffCommand.js')).registerDiffCommand,
  serve: async () => (await import('./serveCommand.js')).registerServeCommand,
  pin: async () => (await import('./pinCommand.js')).registerPinCommand,
  check: async () => (await import('./checkCommand.js')).registerCheckCommand,
  approve: async () => (await import('./approveCommand.js')).registerApproveCommand,
  verify: async () => (await import('./verifyCommand.js')).registerVerifyCommand,
  manifest: async () => (await import('./manifestCommand.js')).registerManifestCommand,
  review: async () => (await import('./reviewCommand.js')).registerReviewCommand,
  wrap: async () => (await import('./wrapCommand.js')).registerWrapCommand,
  login: async () => (await import('./loginCommand.js')).registerLoginCommand,
  protect: async () => (await import('./protectCommand.js')).registerProtectCommand,
  unprotect: async () => (await import('./unprotectCommand.js')).registerUnprotectCommand,
  up: async () => (await import('./upCommand.js')).registerUpCommand,
  down: async () => (await import('./downCommand.js')).registerDownCommand,
};

/** The commands that answer SIGINT and SIGTERM themselves (they drain, then stop what they run). */
const OWN_SIGNALS: ReadonlySet<string> = new Set(['serve', 'wrap', 'review']);

/**
 * The commands that `args` need registered: the one they name; none for `--version` (printed before
 * any command is looked at: about 0.15 s of CPU instead of 1.1 s with them all); else, without a
 * command name (`--help`, `help`, a mistyped name), every command, so help and suggestions list them.
 */
function commandsFor(args: readonly string[]): string[] {
  const first = args[0];
  if (first === '--version' || first === '-V') return [];
  return first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : Object.keys(COMMANDS);
}

/**
 * The toolpin command line: a thin list of registrations, one command per file, each writing to `io`.
 * Given the arguments, it registers only the commands they need (commandsFor).
 */
export async function createProgram(
  io: CliIo,
  done: (code: number) => void,
  args: readonly string[] = [],
): Promise<Command> {
  const program = new Command('toolpin')
    .description('an MCP gateway that pins tool definitions and blocks drift')
    // `--version` prints the version of @toolpin/gateway's own package.json, the one it announces.
    .version(CLIENT_INFO.version)
    // Usage errors are bad input (exit 2) like every other; commander has already printed them.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  const registrations = await Promise.all(commandsFor(args).map((name) => COMMANDS[name]?.()));
  for (const register of registrations) register?.(program, io, done);
  return program;
}

/**
 * Runs `toolpin <args…>` (the arguments after the program name) with `io`, and resolves with its
 * exit code: what the binary does, callable in-process.
 */
export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  let code = 0;
  const program = await createProgram(
    io,
    (exitCode) => {
      code = exitCode;
    },
    args,
  );
  // Every other command ends the servers it started when interrupted (cli/stopOnSignal.ts).
  const release = OWN_SIGNALS.has(args[0] ?? '') ? undefined : stopOnSignal(io);
  try {
    await program.parseAsync([...args], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return error.exitCode === 0 ? ExitCodes.OK : ExitCodes.BAD_INPUT;
  } finally {
    release?.();
  }
  return code;
}
