// The MCP conformance suite's auth/metadata-default client scenario (@modelcontextprotocol/conformance:
// its own authorization server and MCP server, its own checks) through each path of
// docs/oauth-conformance.md: the SDK client directly, the SDK client through a toolpin route in
// resource-server mode (forward), and toolpin itself as the OAuth client (`toolpin login`, then an
// SDK stdio client on `toolpin wrap`). `pnpm conformance:auth` runs every auth scenario this way.
// @ts-expect-error: a plain .mjs module without types
import { COLUMNS, judgedChecks, runScenario } from './conformanceRunner.mjs';

interface Column {
  readonly path: string;
  readonly sdk: string;
}
interface Check {
  readonly id: string;
  readonly status: string;
  readonly description: string;
}
interface Run {
  readonly passed: boolean;
  readonly completed: boolean;
  /** The client program's failure line, when it stopped. */
  readonly clientError?: string | undefined;
}

const SCENARIO = 'auth/metadata-default';
// What the scenario must see from a client that completed the authorization code flow.
const FLOW = [
  'authorization-server-metadata',
  'client-registration',
  'authorization-request',
  'pkce-code-challenge-sent',
  'pkce-s256-method-used',
  'token-request',
  'pkce-verifier-matches-challenge',
  'valid-bearer-token',
];

const columns = (COLUMNS as readonly Column[]).filter(
  (column) =>
    (column.path === 'direct' && column.sdk === 'v1') ||
    (column.path === 'resource-server' && column.sdk === 'v2') ||
    (column.path === 'client' && column.sdk === 'v1'),
);
const run = runScenario as (scenario: string, column: Column) => Promise<Run>;
const checksOf = judgedChecks as (run: Run) => Map<string, Check>;

/** The suite's verdict, and why the client stopped when it did (shown by a failing expectation). */
function verdict(result: Run): Pick<Run, 'passed' | 'completed' | 'clientError'> {
  return { passed: result.passed, completed: result.completed, clientError: result.clientError };
}

function statuses(result: Run): Record<string, string> {
  return Object.fromEntries([...checksOf(result)].map(([id, check]) => [id, check.status]));
}

describe(`conformance ${SCENARIO}: the suite's checks on each path`, () => {
  const runs = new Map<string, Run>();

  beforeAll(async () => {
    const results = await Promise.all(columns.map((column) => run(SCENARIO, column)));
    columns.forEach((column, index) => runs.set(column.path, results[index]!));
  }, 60_000);

  /** The suite passed the client, each of `ids` is a success, and no check failed or warned. */
  function expectPassed(path: string, ids: readonly string[]): void {
    const result = runs.get(path)!;
    expect(verdict(result)).toEqual({ passed: true, completed: true, clientError: undefined });
    const seen = statuses(result);
    for (const id of ids) expect([id, seen[id]]).toEqual([id, 'SUCCESS']);
    expect(Object.entries(seen).filter(([, status]) => status !== 'SUCCESS')).toEqual([]);
  }

  it('direct (SDK v1): the suite passes the client, every check a success', () => {
    expectPassed('direct', [...FLOW, 'prm-pathbased-requested']);
  });

  it('resource-server + forward (SDK v2 through a toolpin route): the client completes the flow against the gateway', () => {
    // prm-pathbased-requested: the harness reads the upstream's metadata to configure the route.
    expectPassed('resource-server', FLOW);
  });

  it('client mode (toolpin login + wrap under an SDK v1 stdio client): toolpin passes as the OAuth client', () => {
    expectPassed('client', [...FLOW, 'prm-pathbased-requested']);
  });
});
