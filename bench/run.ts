// `pnpm bench`: what toolpin's inspection costs over talking to an MCP server directly, and over a
// plain reverse proxy, measured side by side in one run on one machine. See README.md, Performance.
// Options: --quick (smoke run), --rounds N, --seconds S, --warmup S, --connections N, --sessions N,
// --skip-idle, --idle-only, --only stateful|stateless, --catalog 3|50|500|5000, --message call|list,
// --cpu-prof (profiles of both proxy processes, in bench-results/profiles/, named by pid).
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stopAllChildren } from './children.js';
import { measureIdleSessions, type IdleSessionsResult } from './idleSessions.js';
import type { MessageKind } from './load.js';
import { describeMachine } from './machine.js';
import { closeHttp } from './mcpHttp.js';
import { measureMessage, openTargetSessions, type Measurement, type WindowOptions } from './measure.js';
import { checkGoals, durationGoal, formatGoals, formatTable, writeResult, type Phase } from './report.js';
import { startGroup, type Profile } from './targets.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    sessions: { type: 'string' },
    'skip-idle': { type: 'boolean', default: false },
    'idle-only': { type: 'boolean', default: false },
    only: { type: 'string' },
    catalog: { type: 'string' },
    message: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
  },
});

const quick = values.quick === true;
const number = (value: string | undefined, fallback: number): number =>
  value === undefined ? fallback : Number(value);
const windows: WindowOptions = {
  rounds: number(values.rounds, quick ? 1 : 3),
  seconds: number(values.seconds, quick ? 1 : 2),
  warmupSeconds: number(values.warmup, quick ? 0.5 : 1),
  connections: number(values.connections, 8),
};
// Calls are measured with 16 connections (the issue's throughput row), listings with 8.
const connectionsFor = (message: MessageKind): number =>
  values.connections === undefined && message === 'call' ? 16 : windows.connections;
const idleSessions = number(values.sessions, quick ? 1000 : 10_000);
const profiles: Profile[] =
  values.only === 'stateful' || values.only === 'stateless' ? [values.only] : ['stateful', 'stateless'];
// tools/call costs the same whatever the catalog size, so it is measured on the small catalog only;
// listings at 50, 500 and 5,000 tools (stateful), and at 500 (stateless, JSON answers).
const fullPlan: { profile: Profile; tools: number; messages: MessageKind[] }[] = [
  { profile: 'stateful', tools: 3, messages: ['call'] },
  { profile: 'stateful', tools: 50, messages: ['list'] },
  { profile: 'stateful', tools: 500, messages: ['list'] },
  { profile: 'stateful', tools: 5000, messages: ['list'] },
  { profile: 'stateless', tools: 3, messages: ['call'] },
  { profile: 'stateless', tools: 500, messages: ['list'] },
];
const plan = fullPlan
  .filter(() => values['idle-only'] !== true)
  .filter((group) => profiles.includes(group.profile))
  .filter((group) => values.catalog === undefined || String(group.tools) === values.catalog)
  .map((group) => ({
    ...group,
    messages: group.messages.filter((message) => values.message === undefined || message === values.message),
  }))
  .filter((group) => group.messages.length > 0);
// Everything is bounded: a run that overruns its budget is stopped, children included.
const DEADLINE_SECONDS = 300;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** toolpin runs from packages/gateway/dist: refuse a missing build, warn about a stale one. */
function checkBuild(): void {
  const cli = fileURLToPath(new URL('../packages/gateway/dist/cli/main.js', import.meta.url));
  if (!existsSync(cli)) throw new Error('packages/gateway/dist is missing: run `pnpm build` first');
  const src = fileURLToPath(new URL('../packages/gateway/src/', import.meta.url));
  const newest = Math.max(
    ...readdirSync(src, { recursive: true, encoding: 'utf8' }).map(
      (file) => statSync(`${src}${file}`).mtimeMs,
    ),
  );
  const built = new URL('../packages/gateway/tsconfig.tsbuildinfo', import.meta.url);
  if (existsSync(built) && newest > statSync(built).mtimeMs)
    log('  note: packages/gateway/src changed after the last build; run `pnpm build` to bench it');
}

async function main(): Promise<void> {
  checkBuild();
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const machine = describeMachine();
  log(
    `toolpin bench: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.platform}, Node ${machine.node}, load ${machine.loadAverage.join(' ')}`,
  );
  log(
    `  ${Object.entries(machine.packages)
      .map(([name, version]) => `${name} ${version}`)
      .join(', ')}; commit ${machine.commit}`,
  );
  log(
    `  ${windows.connections} connections (${connectionsFor('call')} for calls), ${windows.rounds} rounds of ${windows.seconds} s per target after ${windows.warmupSeconds} s of warm-up`,
  );
  if (machine.loadAverage[0] !== undefined && machine.loadAverage[0] > machine.cores / 2) {
    log(
      `  note: the 1-minute load average (${machine.loadAverage[0]}) is high for ${machine.cores} cores: other processes compete, req/s will be noisy`,
    );
  }
  const profileDir = fileURLToPath(new URL('../bench-results/profiles/', import.meta.url));
  const proxyFlags = values['cpu-prof'] === true ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  if (proxyFlags.length > 0) mkdirSync(profileDir, { recursive: true });

  const measurements: Measurement[] = [];
  const phases: Phase[] = [];
  const phase = (name: string, since: number): void => {
    const seconds = Math.round((performance.now() - since) / 100) / 10;
    phases.push({ name, seconds });
    log(`  (${name}: ${seconds.toFixed(1)} s)`);
  };
  for (const { profile, tools, messages } of plan) {
    log(`\n${profile} upstream, ${tools} tools`);
    let since = performance.now();
    const group = await startGroup(profile, tools, proxyFlags);
    phase(`${profile} ${tools} start`, since);
    since = performance.now();
    if (proxyFlags.length > 0)
      log(
        `  profiling: ${group.targets.map((target) => `${target.name} pid ${target.pid ?? '-'}`).join(', ')}`,
      );
    try {
      const sessions = await openTargetSessions(group, Math.max(...messages.map(connectionsFor)));
      for (const message of messages) {
        // A 5,000-tool listing takes long enough that a short window holds too few of them: twice
        // the window (30-40 listings of 8 connections on a quiet machine; 3 times held 45-55).
        const seconds = tools >= 5000 ? windows.seconds * 2 : windows.seconds;
        const options = { ...windows, seconds, connections: connectionsFor(message) };
        const results = await measureMessage(group, message, sessions, options);
        for (const m of results)
          log(
            `  tools/${message} ${m.target.padEnd(11)} ${m.reqPerSec.toFixed(0).padStart(6)} req/s  cpu ${m.proxyCpuUsPerReq?.toFixed(0) ?? '-'} us/req${m.target === 'toolpin' && m.cpuVsBaseline !== undefined ? `  (${m.cpuVsBaseline.toFixed(2)} x the baseline build's CPU, paired)` : ''}`,
          );
        measurements.push(...results);
      }
      const bad = [
        'catalog.drift',
        'call.blocked',
        'call.flagged',
        'upstream.unreachable',
        'upstream.stream_broken',
        'request.rejected',
        'catalog.fetch_failed',
      ].filter((event) => group.toolpin.events.has(event));
      if (bad.length > 0) throw new Error(`toolpin logged ${bad.join(', ')}: the benchmark is invalid`);
      phase(`${profile} ${tools} measure`, since);
    } finally {
      since = performance.now();
      await group.stop();
      phase(`${profile} ${tools} stop`, since);
    }
  }

  let idle: IdleSessionsResult | undefined;
  if (values['skip-idle'] !== true) {
    log(
      `\nidle sessions: ${idleSessions} sessions through toolpin, each initialized and listing 3 tools once`,
    );
    const since = performance.now();
    idle = await measureIdleSessions(idleSessions, 3, 32, quick ? 5 : 20);
    phase('idle sessions', since);
    const mb = (bytes: number | undefined): string => ((bytes ?? NaN) / 2 ** 20).toFixed(1);
    log(
      `  toolpin RSS ${mb(idle.rssBytes)} MB idle after ${idle.idleSeconds} s (${mb(idle.rssAfterLoadBytes)} MB right after the load, ${mb(idle.rssBaselineBytes)} MB at start); sessions opened in ${idle.seconds.toFixed(1)} s`,
    );
  }

  const complete =
    values['skip-idle'] !== true &&
    values['idle-only'] !== true &&
    values.only === undefined &&
    values.catalog === undefined &&
    values.message === undefined &&
    !quick;
  const goals = [
    ...checkGoals(measurements, idle),
    durationGoal((performance.now() - started) / 1000, complete),
  ];
  const file = await writeResult({
    startedAt,
    seconds: (performance.now() - started) / 1000,
    options: { ...windows, idleSessions, profiles, quick, cpuProf: values['cpu-prof'] === true },
    machine,
    loadAverageAtEnd: os.loadavg().map((load) => Math.round(load * 100) / 100),
    measurements,
    idleSessions: idle,
    phases,
    goals,
  });
  process.stdout.write(
    `\n${formatTable(measurements)}\n\nGoals (ratios within this run):\n${formatGoals(goals)}\n\n`,
  );
  process.stdout.write(
    `${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; load average ${machine.loadAverage.join(' ')} at start, ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at end\n`,
  );
  process.stdout.write(`results: ${file} (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
}

const deadline = setTimeout(() => {
  log(`bench: over the ${DEADLINE_SECONDS} s budget, stopping`);
  process.exit(1);
}, DEADLINE_SECONDS * 1000);

main()
  .catch((error: Error) => {
    log(`bench failed: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    clearTimeout(deadline);
    await stopAllChildren();
    closeHttp();
  });
