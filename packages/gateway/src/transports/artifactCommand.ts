import { basename } from 'node:path';

/**
 * What a stdio command runs, read from its argv alone (no I/O): a package a runner fetches, an
 * image, or a local program (with the entry file an interpreter reads). `at` is the index in argv
 * of the word a verified launch replaces (the package spec, the image).
 */
export type LaunchShape =
  | {
      readonly kind: 'npm';
      readonly runner: string;
      readonly name: string;
      readonly spec: string;
      readonly at: number;
    }
  | { readonly kind: 'docker'; readonly image: string; readonly at: number }
  | { readonly kind: 'program'; readonly program: string; readonly entry?: string }
  | { readonly kind: 'unsupported'; readonly problem: string };

// npm package names (validate-npm-package-name, new packages): an optional scope, URL-safe words.
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;

// npx / npm exec / pnpm dlx options that take the next word as their value (the rest are switches).
const RUNNER_VALUE_OPTIONS = new Set([
  '--registry',
  '--cache',
  '--userconfig',
  '--prefix',
  '--workspace',
  '-w',
]);

// docker run's switches (every other option takes a value): long names, and short letters that may cluster (-it).
const DOCKER_SWITCHES = new Set([
  '--detach',
  '--interactive',
  '--tty',
  '--rm',
  '--init',
  '--privileged',
  '--publish-all',
  '--read-only',
  '--no-healthcheck',
  '--oom-kill-disable',
  '--quiet',
  '--help',
]);
const DOCKER_SHORT_SWITCHES = new Set(['d', 'i', 't', 'P', 'q']);

// Interpreters whose first word that is not an option is the file they run (node server.js).
const INTERPRETERS = new Set(['node', 'nodejs', 'python', 'python3', 'bash', 'sh', 'tsx']);
const NODE_VALUE_OPTIONS = new Set([
  '-r',
  '--require',
  '--import',
  '--loader',
  '--experimental-loader',
  '-C',
  '--conditions',
]);
const NO_ENTRY_OPTIONS = new Set(['-e', '--eval', '-p', '--print', '-c', '-m']);

/** The program's own name, without folder or Windows suffix (`/usr/bin/npx.cmd` → `npx`). */
function programName(program: string): string {
  return basename(program).replace(/\.(?:cmd|exe|bat|ps1)$/i, '');
}

/** Reads what `argv` runs: see {@link LaunchShape}. */
export function shapeOfLaunch(argv: readonly string[]): LaunchShape {
  const program = argv[0] ?? '';
  const name = programName(program);
  if (name === 'npx') return runnerShape(argv, 1, 'npx');
  if (name === 'npm' && (argv[1] === 'exec' || argv[1] === 'x')) return runnerShape(argv, 2, 'npm exec');
  if (name === 'pnpm' && argv[1] === 'dlx') return runnerShape(argv, 2, 'pnpm dlx');
  if ((name === 'docker' || name === 'podman') && argv[1] === 'run') return dockerShape(argv, 2);
  if (name === 'uvx' || (name === 'uv' && argv[1] === 'tool') || name === 'pipx' || name === 'bunx')
    return { kind: 'unsupported', problem: `${name}: toolpin resolves npm packages (npx, pnpm dlx) only` };
  if (INTERPRETERS.has(name)) return interpreterShape(argv);
  return { kind: 'program', program };
}

function runnerShape(argv: readonly string[], from: number, runner: string): LaunchShape {
  const packages: { spec: string; at: number }[] = [];
  let first: { spec: string; at: number } | undefined;
  for (let index = from; index < argv.length && first === undefined; index++) {
    const word = argv[index] ?? '';
    if (word === '--') {
      if (index + 1 < argv.length) first = { spec: argv[index + 1] ?? '', at: index + 1 };
    } else if (word === '-p' || word === '--package') {
      packages.push({ spec: argv[index + 1] ?? '', at: index + 1 });
      index++;
    } else if (word.startsWith('--package=')) packages.push({ spec: word.slice(10), at: -1 });
    else if (word === '-c' || word === '--call' || word.startsWith('--call='))
      return { kind: 'unsupported', problem: `${runner} --call: a shell line cannot be pinned` };
    else if (RUNNER_VALUE_OPTIONS.has(word)) index++;
    else if (!word.startsWith('-')) first = { spec: word, at: index };
  }
  if (packages.length > 1) return { kind: 'unsupported', problem: `${runner}: more than one --package` };
  const chosen = packages[0] ?? first;
  if (chosen === undefined || chosen.spec === '')
    return { kind: 'unsupported', problem: `${runner}: no package named` };
  if (chosen.at === -1)
    return { kind: 'unsupported', problem: `${runner}: write --package <spec> as two words to pin it` };
  const name = npmName(chosen.spec);
  if (name === undefined)
    return {
      kind: 'unsupported',
      problem: `${runner} ${chosen.spec}: not a registry package (a path, URL, git or alias spec cannot be pinned)`,
    };
  return { kind: 'npm', runner, name, spec: chosen.spec, at: chosen.at };
}

/** The package name of a registry spec (`@scope/pkg@^1` → `@scope/pkg`), or undefined for any other spec. */
export function npmName(spec: string): string | undefined {
  const at = spec.indexOf('@', 1);
  const name = at === -1 ? spec : spec.slice(0, at);
  return NPM_NAME.test(name) ? name : undefined;
}

function dockerShape(argv: readonly string[], from: number): LaunchShape {
  for (let index = from; index < argv.length; index++) {
    const word = argv[index] ?? '';
    if (word === '--') return imageAt(argv, index + 1);
    if (!word.startsWith('-') || word === '-') return imageAt(argv, index);
    if (word.startsWith('--')) {
      if (!word.includes('=') && !DOCKER_SWITCHES.has(word)) index++;
      continue;
    }
    // A cluster of short options: switches, then at most one option whose value follows or is attached.
    for (let letter = 1; letter < word.length; letter++) {
      if (DOCKER_SHORT_SWITCHES.has(word[letter] ?? '')) continue;
      if (letter === word.length - 1) index++;
      break;
    }
  }
  return { kind: 'unsupported', problem: 'docker run: no image named' };
}

function imageAt(argv: readonly string[], index: number): LaunchShape {
  const image = argv[index];
  if (image === undefined || image === '')
    return { kind: 'unsupported', problem: 'docker run: no image named' };
  return { kind: 'docker', image, at: index };
}

function interpreterShape(argv: readonly string[]): LaunchShape {
  const program = argv[0] ?? '';
  for (let index = 1; index < argv.length; index++) {
    const word = argv[index] ?? '';
    if (NO_ENTRY_OPTIONS.has(word)) break;
    if (NODE_VALUE_OPTIONS.has(word)) index++;
    else if (!word.startsWith('-')) return { kind: 'program', program, entry: word };
  }
  // `python -m pkg`, `node -e …`: what runs is not one file, and hashing the interpreter would pin nothing of it.
  return {
    kind: 'unsupported',
    problem: `${programName(program)}: no entry file to pin (a module or inline code)`,
  };
}

/** `argv` with the word at `at` replaced (the exact package spec, the image id). */
export function replaceWord(argv: readonly string[], at: number, word: string): string[] {
  return argv.map((value, index) => (index === at ? word : value));
}
