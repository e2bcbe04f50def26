// The command line the conformance runner gives a client program: `node <program> <v1|v2>
// <server-url>` with MCP_CONFORMANCE_SCENARIO set. What the program prints tells the runner how it
// ended (conformanceRunner.mjs reads stdout and stderr back).
import { basename } from 'node:path';
import { COMPLETED_MARKER, FAILED_PREFIX, NOT_APPLICABLE_MARKER } from '../conformanceRunner.mjs';

/**
 * Runs `run(sdkName, serverUrl, scenario)` and exits: 0 after printing the completion marker, 1
 * when it throws (its message on stderr) or resolves `{ notApplicable: reason }`, 2 on bad usage.
 */
export function runClientProgram(run) {
  const [, program, sdkName, serverUrl] = process.argv;
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
  if (sdkName === undefined || serverUrl === undefined || scenario === undefined) {
    console.error(
      `usage: MCP_CONFORMANCE_SCENARIO=<scenario> node ${basename(program ?? '')} <v1|v2> <server-url>`,
    );
    process.exit(2);
  }
  run(sdkName, serverUrl, scenario).then(
    (outcome) => {
      if (outcome?.notApplicable !== undefined)
        console.log(`${NOT_APPLICABLE_MARKER}: ${outcome.notApplicable}`);
      else console.log(COMPLETED_MARKER);
      process.exit(outcome?.notApplicable !== undefined ? 1 : 0);
    },
    (error) => {
      console.error(
        `${FAILED_PREFIX} (${sdkName}): ${error instanceof Error ? error.message : String(error)}`,
      );
      process.exit(1);
    },
  );
}
