// Runs the MCP conformance suite's client scenarios (@modelcontextprotocol/conformance, its CLI)
// against a client command and reads back the checks. Used by `pnpm conformance:auth`
// (conformanceAuth.mjs) and by test/conformance/authScenarios.test.ts.
//
// One CLI process per scenario and client: the suite starts the scenario's authorization server
// and MCP server on 127.0.0.1, runs `<command> <server-url>` with MCP_CONFORMANCE_SCENARIO set,
// then judges what its servers saw (checks.json in the output directory).
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
/** The repository root: the CLI and the client commands run from there. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The suite's CLI by release: `stable` (0.1.16, the auth scenarios) and `next` (0.2.0-alpha.12
 * under the npm alias conformance-next, the 2026-07-28 client scenarios such as http-custom-headers).
 */
const CONFORMANCE_CLIS = {
  stable: join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js'),
  next: join(dirname(require.resolve('conformance-next/package.json')), 'dist/index.js'),
};
const NODE20_REGISTER = fileURLToPath(new URL('./node20/register.mjs', import.meta.url));
const CLIENTS = relative(ROOT, fileURLToPath(new URL('./clients/', import.meta.url)));

/** What each client program prints last on stdout when it completed its scenario. */
export const COMPLETED_MARKER = 'conformance client completed';
/** What a client program prints when its path cannot run the scenario by design (then the reason). */
export const NOT_APPLICABLE_MARKER = 'conformance scenario not applicable';
/** How a client program's failure line starts on stderr (then ` (<sdk>): <message>`). */
export const FAILED_PREFIX = 'conformance client failed';

/**
 * The clients under test, each with the time the suite gives it. `path` is how the client reaches
 * the scenario: directly, through a toolpin gateway route in resource-server mode (`resource-server`:
 * upstreamCredential forward; `exchange`: upstreamCredential exchange), or with toolpin itself as
 * the OAuth client (auth.mode client: `toolpin login`, then an SDK stdio client spawning `toolpin wrap`).
 */
export const COLUMNS = Object.freeze([
  { path: 'direct', sdk: 'v1', command: `node ${CLIENTS}/sdkAuthClient.mjs v1`, timeoutMs: 30_000 },
  { path: 'direct', sdk: 'v2', command: `node ${CLIENTS}/sdkAuthClient.mjs v2`, timeoutMs: 30_000 },
  {
    path: 'resource-server',
    sdk: 'v1',
    command: `node ${CLIENTS}/viaResourceServer.mjs v1`,
    timeoutMs: 45_000,
  },
  {
    path: 'resource-server',
    sdk: 'v2',
    command: `node ${CLIENTS}/viaResourceServer.mjs v2`,
    timeoutMs: 45_000,
  },
  { path: 'exchange', sdk: 'v1', command: `node ${CLIENTS}/viaExchange.mjs v1`, timeoutMs: 45_000 },
  { path: 'exchange', sdk: 'v2', command: `node ${CLIENTS}/viaExchange.mjs v2`, timeoutMs: 45_000 },
  // Four node processes per run (the suite, this driver, toolpin login, toolpin wrap).
  { path: 'client', sdk: 'v1', command: `node ${CLIENTS}/viaToolpinClient.mjs v1`, timeoutMs: 60_000 },
  { path: 'client', sdk: 'v2', command: `node ${CLIENTS}/viaToolpinClient.mjs v2`, timeoutMs: 60_000 },
]);

/**
 * The clients of the 2026-07-28 tool-call scenarios (suite `next`): an SDK v2 client directly, and
 * the same client through a toolpin route (a pinGuard in front of the scenario's server, pinned by
 * toolpin's own `pin` in-process).
 */
export const TOOL_CALL_COLUMNS = Object.freeze([
  { path: 'direct', sdk: 'v2', command: `node ${CLIENTS}/sdkToolCallsClient.mjs v2`, timeoutMs: 30_000 },
  { path: 'gateway', sdk: 'v2', command: `node ${CLIENTS}/viaGateway.mjs v2`, timeoutMs: 30_000 },
]);

/** A column's label in tables: `direct v1`. */
export function columnLabel(column) {
  return `${column.path} ${column.sdk}`;
}

function runNode(args, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk) => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

/** The suite's client scenarios whose name starts with `prefix`, with their spec revisions. */
export async function listScenarios(prefix = 'auth/') {
  const { code, output } = await runNode(
    ['--import', NODE20_REGISTER, CONFORMANCE_CLIS.stable, 'list'],
    30_000,
  );
  if (code !== 0) throw new Error(`conformance list failed:\n${output}`);
  const scenarios = [];
  for (const line of output.split('\n')) {
    const match = /^\s+- (\S+) \[([^\]]*)\]$/.exec(line);
    if (match?.[1]?.startsWith(prefix)) scenarios.push({ name: match[1], revisions: match[2].split(',') });
  }
  return scenarios;
}

async function findFile(dir, name) {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === name) return join(entry.parentPath ?? entry.path, entry.name);
  }
  return undefined;
}

/**
 * Runs one scenario with one client column. Resolves to the suite's verdict (`passed`: the CLI's
 * exit code, i.e. no failed or warning check and a client that exited 0 unless the scenario
 * expects it to abort), the checks, whether the client printed its completion marker, and whether
 * the run timed out (client timeout in the suite, or the suite killed 15 s after it). `suite`:
 * which release of the suite runs it (CONFORMANCE_CLIS).
 */
export async function runScenario(
  scenario,
  column,
  { clientTimeoutMs = column.timeoutMs, suite = 'stable' } = {},
) {
  const outputDir = await mkdtemp(join(tmpdir(), 'toolpin-conformance-'));
  try {
    const args = ['--import', NODE20_REGISTER, CONFORMANCE_CLIS[suite], 'client'];
    args.push('--command', column.command, '--scenario', scenario, '--timeout', String(clientTimeoutMs));
    args.push('-o', outputDir);
    const cli = await runNode(args, clientTimeoutMs + 15_000);
    const checksFile = await findFile(outputDir, 'checks.json');
    const stdoutFile = await findFile(outputDir, 'stdout.txt');
    const stderrFile = await findFile(outputDir, 'stderr.txt');
    const checks = checksFile === undefined ? [] : JSON.parse(await readFile(checksFile, 'utf8'));
    const stdout = stdoutFile === undefined ? '' : await readFile(stdoutFile, 'utf8');
    const stderr = stderrFile === undefined ? '' : await readFile(stderrFile, 'utf8');
    const completed = stdout.includes(COMPLETED_MARKER);
    const notApplicable = new RegExp(`^${NOT_APPLICABLE_MARKER}: (.*)$`, 'm').exec(stdout)?.[1];
    return {
      scenario,
      column,
      passed: cli.code === 0,
      // The client or the suite did not finish in time (a loaded machine): worth one more try.
      timedOut: cli.signal !== null || checksFile === undefined || cli.output.includes('CLIENT TIMED OUT'),
      completed,
      notApplicable,
      clientError: completed ? undefined : clientErrorOf(stderr),
      checks: checks.map(({ id, status, description, errorMessage, details }) => ({
        id,
        status,
        description,
        errorMessage,
        details,
      })),
      output: cli.output,
    };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}

/** The client program's own failure line, else the last line of its stderr (a crash). */
function clientErrorOf(stderr) {
  const own = new RegExp(`^${FAILED_PREFIX} \\([^)]*\\): (.*)$`, 'm').exec(stderr)?.[1];
  return (
    own ??
    stderr
      .trim()
      .split('\n')
      .findLast((line) => line.trim() !== '')
  );
}

const SEVERITY = { FAILURE: 3, WARNING: 2, SUCCESS: 1 };

/**
 * The judged checks of a run, one per id (a check the scenario records several times, such as
 * valid-bearer-token, takes its worst status); INFO records (requests seen) are left out.
 */
export function judgedChecks(run) {
  const byId = new Map();
  for (const check of run.checks) {
    const severity = SEVERITY[check.status];
    if (severity === undefined) continue;
    const seen = byId.get(check.id);
    if (seen === undefined || SEVERITY[seen.status] < severity) byId.set(check.id, check);
  }
  return byId;
}
