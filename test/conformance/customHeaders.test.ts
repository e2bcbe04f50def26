// The MCP conformance suite's 2026-07-28 client scenario http-custom-headers
// (@modelcontextprotocol/conformance 0.2.0-alpha.12, installed as conformance-next): an SDK v2
// client pinned to 2026-07-28 lists tools whose inputSchema carries x-mcp-header annotations,
// calls test_custom_headers (its designated arguments mirrored into Mcp-Param-* headers, SEP-2243
// encoding) and test_custom_headers_null (verbose: null, an optional boolean). The scenario's
// server judges the headers it receives. Run directly, and through a toolpin route pinned to the
// scenario's server by toolpin's own `pin`: the gateway checks every Mcp-Param-* header against
// the argument and the pinned designation, and forwards only those it checked.
// @ts-expect-error: a plain .mjs module without types
import { TOOL_CALL_COLUMNS, judgedChecks, runScenario } from './conformanceRunner.mjs';

interface Column {
  readonly path: string;
  readonly sdk: string;
}
interface Check {
  readonly id: string;
  readonly status: string;
  readonly errorMessage?: string;
}
interface Run {
  readonly passed: boolean;
  readonly completed: boolean;
  readonly clientError?: string | undefined;
  readonly checks: readonly Check[];
}

const SCENARIO = 'http-custom-headers';
// The checks the scenario declares (each judged once per header it sees, worst status kept).
const DECLARED = [
  'sep-2243-client-supports-custom-headers',
  'sep-2243-client-mirrors-designated-params',
  'sep-2243-client-encode-values',
  'sep-2243-client-base64-unsafe',
  'sep-2243-client-omit-null',
];

const columns = TOOL_CALL_COLUMNS as readonly Column[];
const run = runScenario as (scenario: string, column: Column, options: { suite: string }) => Promise<Run>;
const checksOf = judgedChecks as (run: Run) => Map<string, Check>;

/** Every check as recorded (one per header the scenario's server looked at), by id and status. */
function recorded(result: Run): string[] {
  return result.checks.map((check) => `${check.id} ${check.status}`).sort();
}

describe(`conformance ${SCENARIO} (2026-07-28): directly and through the gateway`, () => {
  const runs = new Map<string, Run>();

  beforeAll(async () => {
    const results = await Promise.all(columns.map((column) => run(SCENARIO, column, { suite: 'next' })));
    columns.forEach((column, index) => runs.set(column.path, results[index]!));
  }, 60_000);

  it.each(['direct', 'gateway'])(
    '%s: the suite passes the client, every declared check a success',
    (path) => {
      const result = runs.get(path)!;
      expect({ passed: result.passed, completed: result.completed, clientError: result.clientError }).toEqual(
        {
          passed: true,
          completed: true,
          clientError: undefined,
        },
      );
      const judged = checksOf(result);
      expect(DECLARED.map((id) => [id, judged.get(id)?.status])).toEqual(
        DECLARED.map((id) => [id, 'SUCCESS']),
      );
      expect(result.checks.filter((check) => check.status !== 'SUCCESS')).toEqual([]);
    },
  );

  it('the scenario judged the same headers through the gateway as directly', () => {
    const direct = recorded(runs.get('direct')!);
    // Every designated argument of the call was judged (one check per header, plus the others).
    expect(direct.length).toBeGreaterThanOrEqual(18);
    expect(recorded(runs.get('gateway')!)).toEqual(direct);
  });
});
