import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { PinnedArtifact } from '../config/types.js';
import { replaceWord, shapeOfLaunch, type LaunchShape } from './artifactCommand.js';
import { childEnvironment } from './childEnvironment.js';
import type { StdioLaunch } from './openUpstream.js';

/** Where and how the artifact of a command is resolved: the child's own environment and folder. */
export interface ResolveArtifactOptions {
  /** The environment the child would get (npm reads its registry and cache from it). */
  readonly env: Readonly<Record<string, string>>;
  /** The child's working directory (absolute). */
  readonly cwd: string;
  /** Bound on each npm or docker run. @default 30000 */
  readonly timeoutMs?: number;
}

/** What a command runs, resolved: the artifact and the argv that runs exactly it, or why it cannot be told. */
export type ArtifactResolution =
  | {
      readonly ok: true;
      readonly artifact: PinnedArtifact;
      /** The command rewritten to run exactly this artifact (`pkg@1.2.3`, the image id). */
      readonly argv: readonly string[];
      /** Said beside it: npm's cache was used because the registry could not be reached. */
      readonly note?: string;
    }
  | { readonly ok: false; readonly problem: string };

const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** Resolves what `argv` runs, by the package manager's own resolution, docker, or the file's bytes. */
export async function resolveArtifact(
  argv: readonly string[],
  options: ResolveArtifactOptions,
): Promise<ArtifactResolution> {
  const shape = shapeOfLaunch(argv);
  switch (shape.kind) {
    case 'npm':
      return resolveNpm(shape, argv, options);
    case 'docker':
      return resolveDocker(shape, argv, options);
    case 'program':
      return resolveProgram(shape, argv, options);
    case 'unsupported':
      return { ok: false, problem: shape.problem };
  }
}

interface ToolRun {
  readonly code: number | string | null;
  readonly stdout: string;
  readonly stderr: string;
}

// npm and docker are run without a shell, bounded in time and output.
function runTool(
  program: string,
  args: readonly string[],
  options: ResolveArtifactOptions,
): Promise<ToolRun> {
  return new Promise((done) => {
    execFile(
      program,
      [...args],
      {
        env: { ...options.env },
        cwd: options.cwd,
        timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxBuffer: MAX_OUTPUT_BYTES,
        windowsHide: true,
      },
      (error, stdout, stderr) =>
        done({
          code: error === null ? 0 : ((error as NodeJS.ErrnoException).code ?? error.message),
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
  });
}

type NpmShape = Extract<LaunchShape, { kind: 'npm' }>;

async function resolveNpm(
  shape: NpmShape,
  argv: readonly string[],
  options: ResolveArtifactOptions,
): Promise<ArtifactResolution> {
  const view = ['view', shape.spec, 'name', 'version', 'dist.integrity', '--json'];
  let run = await runTool('npm', view, options);
  let note: string | undefined;
  // The registry out of reach (a laptop offline): npm's own cache answers, and says so.
  if (run.code !== 0 && isNetworkFailure(run)) {
    const cached = await runTool('npm', [...view, '--offline'], options);
    if (cached.code === 0) {
      run = cached;
      note = "the registry could not be reached: npm's cache answered";
    }
  }
  const read = readNpmView(run, shape.spec);
  if (!read.ok) return read;
  const artifact = {
    kind: 'npm' as const,
    package: read.name,
    version: read.version,
    integrity: read.integrity,
  };
  const exact = replaceWord(argv, shape.at, `${read.name}@${read.version}`);
  // npx runs a cached install of that version without fetching it again: it must hold the same bytes.
  const cached = await npxCacheIntegrities(read.name, read.version, options.env);
  const other = cached.find((integrity) => integrity !== read.integrity);
  if (other !== undefined)
    return {
      ok: true,
      artifact: { ...artifact, integrity: other },
      argv: exact,
      note: `npx's cache holds ${read.name}@${read.version} with another integrity than the registry states`,
    };
  return { ok: true, artifact, argv: exact, ...(note === undefined ? {} : { note }) };
}

function isNetworkFailure(run: ToolRun): boolean {
  return /\b(?:ENOTFOUND|ECONNREFUSED|ECONNRESET|EAI_AGAIN|ETIMEDOUT|ENETUNREACH)\b/.test(
    run.stdout + run.stderr,
  );
}

type NpmView =
  | { readonly ok: true; readonly name: string; readonly version: string; readonly integrity: string }
  | { readonly ok: false; readonly problem: string };

/** Reads `npm view <spec> name version dist.integrity --json`: one version, or why not. */
export function readNpmView(run: ToolRun, spec: string): NpmView {
  if (run.code === 'ENOENT')
    return { ok: false, problem: `npm view ${spec}: npm is not installed (not on PATH)` };
  let value: unknown;
  try {
    value = JSON.parse(run.stdout);
  } catch {
    const line =
      run.stderr.split('\n').find((text) => text.includes('npm error')) ?? `exit ${String(run.code)}`;
    return { ok: false, problem: `npm view ${spec}: ${line.trim()}` };
  }
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const error = record.error as { summary?: unknown } | undefined;
  if (run.code !== 0 || error !== undefined)
    return {
      ok: false,
      problem: `npm view ${spec}: ${String(error?.summary ?? `exit ${String(run.code)}`)}`,
    };
  const { name, version } = record;
  const integrity = record['dist.integrity'];
  if (Array.isArray(version) || Array.isArray(value))
    return {
      ok: false,
      problem: `npm view ${spec}: the spec matches several versions; name one version or a tag`,
    };
  if (typeof name !== 'string' || typeof version !== 'string' || typeof integrity !== 'string')
    return { ok: false, problem: `npm view ${spec}: the registry states no name, version and integrity` };
  return { ok: true, name, version, integrity };
}

/**
 * The integrities npx's cache recorded for `name@version` (`<cache>/_npx/<hash>/package-lock.json`,
 * one folder per set of packages npx installed): npx runs such an install without fetching again.
 */
async function npxCacheIntegrities(
  name: string,
  version: string,
  env: Readonly<Record<string, string>>,
): Promise<string[]> {
  const cache = env.npm_config_cache ?? env.NPM_CONFIG_CACHE ?? join(env.HOME ?? homedir(), '.npm');
  const folders = await readdir(join(cache, '_npx')).catch(() => [] as string[]);
  const found: string[] = [];
  for (const folder of folders) {
    const lock = await readFile(join(cache, '_npx', folder, 'package-lock.json'), 'utf8').catch(() => '');
    try {
      const packages = (
        JSON.parse(lock) as { packages?: Record<string, { version?: unknown; integrity?: unknown }> }
      ).packages;
      const entry = packages?.[`node_modules/${name}`];
      if (entry?.version === version && typeof entry.integrity === 'string') found.push(entry.integrity);
    } catch {
      // not a lock npx wrote
    }
  }
  return found;
}

type DockerShape = Extract<LaunchShape, { kind: 'docker' }>;

async function resolveDocker(
  shape: DockerShape,
  argv: readonly string[],
  options: ResolveArtifactOptions,
): Promise<ArtifactResolution> {
  const program = argv[0] ?? 'docker';
  const run = await runTool(program, ['image', 'inspect', '--format', '{{json .}}', shape.image], options);
  if (run.code === 'ENOENT')
    return {
      ok: false,
      problem: `${program} is not installed (not on PATH): the image of ${shape.image} cannot be resolved`,
    };
  if (run.code !== 0)
    return {
      ok: false,
      problem: `${program} image inspect ${shape.image}: ${run.stderr.trim().split('\n')[0] ?? `exit ${String(run.code)}`} (pull the image first)`,
    };
  const id = readImageId(run.stdout);
  if (id === undefined)
    return { ok: false, problem: `${program} image inspect ${shape.image}: no image id in its answer` };
  return {
    ok: true,
    artifact: { kind: 'docker', image: shape.image, id },
    argv: replaceWord(argv, shape.at, id),
  };
}

/**
 * The image id of `docker image inspect` output: `--format '{{json .}}'` (one object) or the
 * default (an array of one); `Id` is `sha256:` and 64 hex digits.
 */
export function readImageId(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const image = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
  const id = (image as { Id?: unknown } | undefined)?.Id;
  return typeof id === 'string' && /^sha256:[0-9a-f]{64}$/.test(id) ? id : undefined;
}

type ProgramShape = Extract<LaunchShape, { kind: 'program' }>;

async function resolveProgram(
  shape: ProgramShape,
  argv: readonly string[],
  options: ResolveArtifactOptions,
): Promise<ArtifactResolution> {
  const path =
    shape.entry === undefined ? await findProgram(shape.program, options) : resolve(options.cwd, shape.entry);
  if (path === undefined) return { ok: false, problem: `${shape.program}: not found on PATH` };
  try {
    const bytes = await readFile(path);
    const sha256 = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    return { ok: true, artifact: { kind: 'file', path, sha256 }, argv };
  } catch (error) {
    return {
      ok: false,
      problem: `${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
}

// The file a program name runs: a path as given (against the child's folder), else the first executable on PATH.
async function findProgram(program: string, options: ResolveArtifactOptions): Promise<string | undefined> {
  if (isAbsolute(program) || program.includes('/') || program.includes('\\'))
    return resolve(options.cwd, program);
  for (const folder of (options.env.PATH ?? '').split(delimiter)) {
    if (folder === '') continue;
    const candidate = resolve(options.cwd, folder, program);
    try {
      if ((await stat(candidate)).isFile()) {
        await access(candidate, constants.X_OK);
        return candidate;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Resolves the artifact of a stdio upstream as `pin`, `check` and `approve` start it (the SDK's
 * default environment plus the pin's `env`, a `cwd` against the pin file's folder), and the launch
 * that runs exactly it, so what is listed is what is pinned.
 */
export async function resolveLaunchArtifact(
  launch: StdioLaunch,
  options: { readonly baseDir?: string | undefined; readonly timeoutMs?: number },
): Promise<{ readonly resolution: ArtifactResolution; readonly launch: StdioLaunch }> {
  const argv = [...launch.command, ...(launch.args ?? [])];
  const cwd =
    launch.cwd === undefined ? process.cwd() : resolve(options.baseDir ?? process.cwd(), launch.cwd);
  const resolution = await resolveArtifact(argv, {
    env: childEnvironment(launch.env, false, launch.passEnv),
    cwd,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  if (!resolution.ok) return { resolution, launch };
  return { resolution, launch: { ...launch, command: resolution.argv, args: [] } };
}
