// What tracing costs a request while it is off (the default): every hook the request path calls
// (observe/tracing.ts: the request span, running the decision and the send in its context, the
// traceparent upstream, the decision span, the end of the span), called as one proxied tools/call
// calls them, in-process. CPU time of this process (process.cpuUsage), per request, beside an empty
// loop of the same shape. Compare with the proxy's CPU per request in `pnpm bench` (~100 us and up).
// Run: npx tsx bench/tracingOffCost.ts   (after `npx tsc -b`)
import {
  endRequest,
  injectTrace,
  traceDecision,
  traceRequest,
  tracingActive,
  withTrace,
} from '../packages/gateway/dist/observe/tracing.js';

const REQUESTS = 2_000_000;
const ROUNDS = 5;
const request = { method: 'tools/call', id: 7, params: { name: 'echo', arguments: { text: 'hi' } } };
const decision = { kind: 'allow' } as const;
let sink = 0;

/** The hooks of one proxied tools/call, in the order the request path calls them. */
function hooked(): void {
  const traced = traceRequest('streamable-http', 'bench', request);
  sink += withTrace(traced, () => {
    traceDecision('bench', 'tools', 'echo', 'call', decision);
    return 1;
  });
  const headers: Record<string, unknown> = {};
  injectTrace(traced, headers);
  endRequest(traced);
}

/** The same shape without the hooks: a closure call and a headers object. */
function bare(): void {
  sink += ((): number => 1)();
  const headers: Record<string, unknown> = {};
  sink += Object.keys(headers).length;
}

/** CPU nanoseconds per call of `work`, the median of the rounds. */
function nsPerCall(work: () => void): number {
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const start = process.cpuUsage();
    for (let i = 0; i < REQUESTS; i += 1) work();
    const used = process.cpuUsage(start);
    samples.push(((used.user + used.system) * 1000) / REQUESTS);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(ROUNDS / 2)] ?? Number.NaN;
}

if (tracingActive()) throw new Error('tracing is on: this measures the off path');
// Warm both paths up before measuring (JIT).
nsPerCall(hooked);
nsPerCall(bare);
const withHooks = nsPerCall(hooked);
const without = nsPerCall(bare);
console.log(`tracing off, per tools/call, CPU (median of ${ROUNDS} rounds of ${REQUESTS.toLocaleString()}):`);
console.log(`  with the tracing hooks   ${withHooks.toFixed(1)} ns`);
console.log(`  same shape, no hooks     ${without.toFixed(1)} ns`);
console.log(`  hooks cost               ${(withHooks - without).toFixed(1)} ns per request`);
if (sink === 0) console.log('(sink)');
