// The CPU a tools/call decision spends on the pinned-schema check, in-process and without HTTP:
// ServerCheckpoint.decideKnownCall (+ expectResult) for the benchmark's echo tool, with its pinned
// inputSchema checked, and with the check turned off (`validate: false`). CPU time of this process
// (process.cpuUsage), so other load on the machine changes it far less than the HTTP benchmark.
// Run: npx tsx bench/schemaCheckCost.ts   (after `npx tsc -b`)
import { digestCatalog, restrictTool, TRACE_PROFILE } from '@toolpin/digest';
// The checkpoint is not public API: the built modules are imported by path, as toolpinTarget runs dist/.
import { parseServerConfig, type ServerConfig } from '../packages/gateway/dist/config/index.js';
import { ServerCheckpoint } from '../packages/gateway/dist/checkpoint/serverCheckpoint.js';
import { Alerts } from '../packages/gateway/dist/observe/alerts.js';
import { createLogger } from '../packages/gateway/dist/observe/logger.js';
import { SessionStore } from '../packages/gateway/dist/state/sessionStore.js';
import { ToolDigester } from '../packages/gateway/dist/state/toolDigester.js';
import { ECHO_TOOL, makeCatalog } from './catalog.js';

const CALLS = 200_000;
const ROUNDS = 5;

function configOf(tools: readonly Record<string, unknown>[], validate: boolean): ServerConfig {
  const digest = digestCatalog(tools, { profile: TRACE_PROFILE });
  return parseServerConfig(
    {
      name: 'bench',
      upstream: { url: 'http://127.0.0.1:9/mcp' },
      pin: { catalog: digest.catalog, tools: digest.entries },
      definitions: Object.fromEntries(
        digest.tools.map((tool, i) => [tool.key, restrictTool(tools[i] as Record<string, unknown>)]),
      ),
      ...(validate ? {} : { validate: { [`tool:${ECHO_TOOL}`]: false } }),
    },
    '(bench)',
  );
}

function checkpointOf(config: ServerConfig, tools: readonly Record<string, unknown>[]): ServerCheckpoint {
  const logger = createLogger({ level: 'silent' });
  const checkpoint = new ServerCheckpoint({
    config,
    sessions: new SessionStore(),
    digester: new ToolDigester(),
    alerts: new Alerts(logger),
    logger,
  });
  checkpoint.expectAnswer('s', 'l', 'tools/list', {});
  checkpoint.inspectUpstreamText('s', JSON.stringify({ jsonrpc: '2.0', id: 'l', result: { tools } }));
  return checkpoint;
}

/** CPU microseconds per decided call. */
function measure(checkpoint: ServerCheckpoint): number {
  const args = { text: 'hello from the benchmark' };
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    const decision = checkpoint.decideKnownCall('s', ECHO_TOOL, args);
    if (decision?.kind !== 'allow' || decision.flagged !== undefined) throw new Error('call not allowed');
    checkpoint.expectResult('s', i, ECHO_TOOL);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

const tools = makeCatalog(3);
const on = checkpointOf(configOf(tools, true), tools);
const off = checkpointOf(configOf(tools, false), tools);
const results = { on: [] as number[], off: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  results.off.push(measure(off));
  results.on.push(measure(on));
}
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
console.log(
  `decideKnownCall, echo (3-tool catalog), ${CALLS} calls x ${ROUNDS} rounds, CPU us/call (median): ` +
    `validation off ${median(results.off).toFixed(2)}, on ${median(results.on).toFixed(2)}, ` +
    `cost ${(median(results.on) - median(results.off)).toFixed(2)}`,
);
