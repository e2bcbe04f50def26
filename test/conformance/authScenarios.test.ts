// The MCP conformance suite's auth client scenarios (@modelcontextprotocol/conformance: its own
// authorization server and MCP server, its own checks) through each path of
// docs/oauth-conformance.md: auth/metadata-default with the SDK client directly and with toolpin
// itself as the OAuth client (`toolpin login`, then an SDK stdio client on `toolpin wrap`), and
// auth/scope-step-up (the whole authorization code flow, then a 403 insufficient_scope on
// tools/call that the client must step up from) with the SDK client through a toolpin route in
// resource-server mode, forward and exchange. `pnpm conformance:auth` runs every auth scenario this way.
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
  readonly details?: Record<string, unknown>;
}
interface Run {
  readonly passed: boolean;
  readonly completed: boolean;
  /** The client program's failure line, when it stopped. */
  readonly clientError?: string | undefined;
  /** The client or the suite did not finish in time (a loaded machine), rather than failing. */
  readonly timedOut: boolean;
  /** Every check recorded, INFO and repeats included. */
  readonly checks: readonly Check[];
}

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
// Step-up: the first authorization asks the scope of the 401, the second the wider one of the 403.
const STEP_UP = ['scope-step-up-initial', 'scope-step-up-escalation'];
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** Each path once, with the scenario it shows and the SDK that runs it (one run per path). */
const PLAN: readonly { readonly path: string; readonly sdk: string; readonly scenario: string }[] = [
  { path: 'direct', sdk: 'v1', scenario: 'auth/metadata-default' },
  { path: 'resource-server', sdk: 'v2', scenario: 'auth/scope-step-up' },
  { path: 'exchange', sdk: 'v1', scenario: 'auth/scope-step-up' },
  { path: 'client', sdk: 'v1', scenario: 'auth/metadata-default' },
];
const run = runScenario as (scenario: string, column: Column) => Promise<Run>;
const checksOf = judgedChecks as (run: Run) => Map<string, Check>;

/** The suite's verdict, and why the client stopped when it did (shown by a failing expectation). */
function verdict(result: Run): Pick<Run, 'passed' | 'completed' | 'clientError' | 'timedOut'> {
  const { passed, completed, clientError, timedOut } = result;
  return { passed, completed, clientError, timedOut };
}

function statuses(result: Run): Record<string, string> {
  return Object.fromEntries([...checksOf(result)].map(([id, check]) => [id, check.status]));
}

/** The grant types the scenario's token endpoint was asked for, in order. */
function grantTypes(result: Run): unknown[] {
  return result.checks
    .filter((check) => check.id === 'token-request')
    .map((check) => check.details?.grantType);
}

describe("conformance auth scenarios: the suite's checks on each path", () => {
  const runs = new Map<string, Run>();

  beforeAll(async () => {
    const results = await Promise.all(
      PLAN.map(({ path, sdk, scenario }) => {
        const column = (COLUMNS as readonly Column[]).find((c) => c.path === path && c.sdk === sdk)!;
        return run(scenario, column);
      }),
    );
    PLAN.forEach(({ path }, index) => runs.set(path, results[index]!));
  }, 90_000);

  /** The suite passed the client, each of `ids` is a success, and no check failed or warned. */
  function expectPassed(path: string, ids: readonly string[]): void {
    const result = runs.get(path)!;
    expect(verdict(result)).toEqual({
      passed: true,
      completed: true,
      clientError: undefined,
      timedOut: false,
    });
    const seen = statuses(result);
    for (const id of ids) expect([id, seen[id]]).toEqual([id, 'SUCCESS']);
    expect(Object.entries(seen).filter(([, status]) => status !== 'SUCCESS')).toEqual([]);
  }

  it('direct (SDK v1, auth/metadata-default): the suite passes the client, every check a success', () => {
    expectPassed('direct', [...FLOW, 'prm-pathbased-requested']);
  });

  it("resource-server + forward (SDK v2, auth/scope-step-up): the client completes the flow against the gateway and steps up on the route's 403", () => {
    // prm-pathbased-requested: the harness reads the upstream's metadata to configure the route.
    expectPassed('resource-server', [...FLOW, ...STEP_UP]);
    // Two authorizations, each a code for a token; the upstream got the client's own tokens.
    expect(grantTypes(runs.get('resource-server')!)).toEqual(['authorization_code', 'authorization_code']);
  });

  it("resource-server + exchange (SDK v1, auth/scope-step-up): the exchanged token follows the client's step-up", () => {
    expectPassed('exchange', [...FLOW, ...STEP_UP]);
    // Each of the client's tokens was exchanged by the gateway before it reached the upstream:
    // the first (basic scope) for tools/list, the stepped-up one for tools/call.
    const grants = grantTypes(runs.get('exchange')!);
    expect(grants.filter((grant) => grant === 'authorization_code')).toHaveLength(2);
    expect(grants.filter((grant) => grant === TOKEN_EXCHANGE)).toHaveLength(2);
  });

  it('client mode (SDK v1 stdio client on toolpin wrap, auth/metadata-default): toolpin passes as the OAuth client', () => {
    expectPassed('client', [...FLOW, 'prm-pathbased-requested']);
  });
});
