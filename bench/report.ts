// The short table, the goals of the benchmark issue checked against one run, and the JSON file.
import { mkdir, writeFile } from 'node:fs/promises';
import type { IdleSessionsResult } from './idleSessions.js';
import type { MachineInfo } from './machine.js';
import type { Measurement } from './measure.js';

/** Everything one run produced. */
export interface BenchResult {
  readonly startedAt: string;
  readonly seconds: number;
  readonly options: Readonly<Record<string, unknown>>;
  readonly machine: MachineInfo;
  readonly loadAverageAtEnd: readonly number[];
  readonly measurements: readonly Measurement[];
  readonly idleSessions: IdleSessionsResult | undefined;
  /** Where the run's time went: each group's start, measurement and stop, and the idle step. */
  readonly phases: readonly Phase[];
  readonly goals: readonly GoalCheck[];
}

/** One step of the run and its wall time. */
export interface Phase {
  readonly name: string;
  readonly seconds: number;
}

/** One goal of the issue, with the figure reached. */
export interface GoalCheck {
  readonly goal: string;
  readonly reached: string;
  readonly met: boolean | undefined;
}

const megabytes = (bytes: number | undefined): string =>
  fixed(bytes === undefined ? undefined : bytes / 2 ** 20, 1);
const fixed = (value: number | undefined, digits: number): string =>
  value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);

/** The table of medians: one line per profile, catalog, message and target. */
export function formatTable(measurements: readonly Measurement[]): string {
  const header = [
    'profile',
    'tools',
    'message',
    'target',
    'req/s',
    'x direct',
    'p50 ms',
    'p99 ms',
    'proxy CPU us/req',
    'x passthrough CPU',
    'x floor CPU',
    'upstream CPU us/req',
  ];
  const rows = measurements.map((m) => [
    m.profile,
    String(m.tools),
    `tools/${m.message}`,
    m.target,
    fixed(m.reqPerSec, 0),
    fixed(m.ratioToDirect, 2),
    fixed(m.p50Ms, 2),
    fixed(m.p99Ms, 2),
    fixed(m.proxyCpuUsPerReq, 0),
    m.target === 'direct' || m.target === 'passthrough' ? '' : fixed(m.cpuVsPassthrough, 2),
    m.target === 'toolpin' || m.target === 'baseline' ? fixed(m.cpuVsFloor, 2) : '',
    fixed(m.upstreamCpuUsPerReq, 0),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] as string).length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) =>
        column < 4 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number),
      )
      .join('  ');
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

function find(
  measurements: readonly Measurement[],
  profile: string,
  message: string,
  tools: number,
  target: string,
): Measurement | undefined {
  return measurements.find(
    (m) => m.profile === profile && m.message === message && m.tools === tools && m.target === target,
  );
}

/** Checks the issue's goals (ratios within this one run) for every profile measured. */
export function checkGoals(
  measurements: readonly Measurement[],
  idle: IdleSessionsResult | undefined,
): GoalCheck[] {
  const goals: GoalCheck[] = [];
  for (const profile of new Set(measurements.map((m) => m.profile))) {
    // The goals of issue 25, each a ratio within this run: CPU per request against the plain
    // passthrough (paired within rounds: steadier than a ratio of two medians), req/s against direct.
    for (const [message, tools, minRatio, maxCpuFactor] of [
      ['call', 3, 0.9, 0.6],
      ['list', 500, 0.95, 1],
      ['list', 5000, undefined, 1.5],
    ] as const) {
      const toolpin = find(measurements, profile, message, tools, 'toolpin');
      const passthrough = find(measurements, profile, message, tools, 'passthrough');
      if (toolpin === undefined || passthrough === undefined) continue;
      const row = `${profile} tools/${message} (${tools} tools)`;
      if (minRatio !== undefined)
        goals.push({
          goal: `${row}: toolpin >= ${minRatio} x direct req/s`,
          reached: `${fixed(toolpin.ratioToDirect, 2)} x (passthrough ${fixed(passthrough.ratioToDirect, 2)} x)`,
          met: toolpin.ratioToDirect >= minRatio,
        });
      const ratio = toolpin.cpuVsPassthrough;
      goals.push({
        goal: `${row}: toolpin CPU/req <= ${maxCpuFactor} x passthrough's`,
        reached: `${fixed(ratio, 2)} x, ${fixed(toolpin.cpuVsFloor, 2)} x the floor's (medians ${fixed(toolpin.proxyCpuUsPerReq, 0)} us, passthrough ${fixed(passthrough.proxyCpuUsPerReq, 0)} us)`,
        met: ratio === undefined ? undefined : ratio <= maxCpuFactor,
      });
    }
    const scaling = listScaling(measurements, profile);
    if (scaling !== undefined) goals.push(scaling);
  }
  if (idle !== undefined) {
    goals.push({
      goal: `${idle.sessions} idle tracked sessions (${idle.tools} tools each): toolpin RSS <= 150 MB`,
      reached: `${megabytes(idle.rssBytes)} MB after ${idle.idleSeconds} s idle (${megabytes(idle.rssAfterLoadBytes)} MB right after the load, ${megabytes(idle.rssBaselineBytes)} MB at start)`,
      met: idle.rssBytes === undefined ? undefined : idle.rssBytes <= 150 * 2 ** 20,
    });
  }
  return goals;
}

/**
 * List cost against catalog size: toolpin's CPU per listing at each size measured (50, 500, 5,000
 * tools), and the marginal cost per megabyte between two sizes. Linear in bytes when the marginal
 * costs (50 to 500, 500 to 5,000) are within 1.5 x of each other.
 */
function listScaling(measurements: readonly Measurement[], profile: string): GoalCheck | undefined {
  const rows = measurements
    .filter((m) => m.profile === profile && m.message === 'list' && m.target === 'toolpin')
    .filter((m) => m.listingBytes !== undefined && m.proxyCpuUsPerReq !== undefined)
    .sort((a, b) => a.tools - b.tools);
  if (rows.length < 3) return undefined;
  const slopes = rows.slice(1).map((m, i) => {
    const before = rows[i] as Measurement;
    const megabytes = ((m.listingBytes as number) - (before.listingBytes as number)) / 2 ** 20;
    return ((m.proxyCpuUsPerReq as number) - (before.proxyCpuUsPerReq as number)) / megabytes;
  });
  const spread = Math.max(...slopes) / Math.min(...slopes);
  const sizes = rows.map(
    (m) => `${m.tools}: ${fixed(m.proxyCpuUsPerReq, 0)} us (${megabytes(m.listingBytes)} MB)`,
  );
  return {
    goal: `${profile} tools/list cost linear in bytes: marginal CPU per MB within 1.5 x across sizes`,
    reached: `${sizes.join(', ')}; ${slopes.map((us) => `${fixed(us / 1000, 2)} ms/MB`).join(' then ')}`,
    met: Math.min(...slopes) > 0 && spread <= 1.5,
  };
}

/** The run's duration against the 5-minute budget of `pnpm bench`. */
export function durationGoal(seconds: number, complete: boolean): GoalCheck {
  return {
    goal: 'the whole run completes in under 5 minutes',
    reached: `${fixed(seconds, 0)} s${complete ? '' : ' (a partial run: options left steps out)'}`,
    met: complete ? seconds < 300 : undefined,
  };
}

/** The goals as lines: met, missed, or not measurable here. */
export function formatGoals(goals: readonly GoalCheck[]): string {
  return goals
    .map(
      (goal) =>
        `${goal.met === undefined ? '  n/a' : goal.met ? '  met' : 'MISSED'}  ${goal.goal}: ${goal.reached}`,
    )
    .join('\n');
}

/** Writes bench-results/<timestamp>.json and returns its path. */
export async function writeResult(result: BenchResult): Promise<string> {
  const dir = new URL('../bench-results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const file = new URL(`${result.startedAt.replace(/[:.]/g, '-')}.json`, dir);
  await writeFile(file, JSON.stringify(result, null, 2) + '\n');
  return file.pathname;
}
