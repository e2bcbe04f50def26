// Measures one message against the four targets of a group: a full check of one answer per
// target, one warm-up window for all of them at once, then rounds in rotating order (ABCD, BCDA, CDAB, ...) so that
// load from other processes on the machine hits every target alike; medians are reported.
import { cpuMicros } from './children.js';
import { bodyOf, runLoad, type LoadResult, type MessageKind } from './load.js';
import { BASE_HEADERS, messagesOf, openSession, post } from './mcpHttp.js';
import type { Group, Profile, Target } from './targets.js';

/** How long and how hard each window loads a target. */
export interface WindowOptions {
  readonly connections: number;
  readonly warmupSeconds: number;
  readonly seconds: number;
  readonly rounds: number;
}

/** One measured window, with the CPU the proxy and the upstream spent per request in it. */
export interface Window extends LoadResult {
  /** Microseconds of CPU (user + system) of the proxy process per request; undefined for direct. */
  readonly proxyCpuUsPerReq: number | undefined;
  readonly upstreamCpuUsPerReq: number | undefined;
}

/** The medians of one target's rounds for one message. */
export interface Measurement {
  readonly profile: Profile;
  readonly tools: number;
  readonly message: MessageKind;
  /** The size of the listing's result in bytes (tools/list only). */
  readonly listingBytes: number | undefined;
  readonly target: Target['name'];
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly proxyCpuUsPerReq: number | undefined;
  readonly upstreamCpuUsPerReq: number | undefined;
  /** reqPerSec over direct's reqPerSec in the same run. */
  readonly ratioToDirect: number;
  /**
   * The proxy's CPU per request over the passthrough's, as the median of the ratios within each
   * round (the two windows of a round are seconds apart, so load from elsewhere hits both alike).
   */
  readonly cpuVsPassthrough: number | undefined;
  /** The proxy's CPU per request over the minimal node:http floor's, paired within rounds likewise. */
  readonly cpuVsFloor: number | undefined;
  /** toolpin's CPU per request over the baseline build's (BENCH_BASELINE_CLI), paired likewise. */
  readonly cpuVsBaseline: number | undefined;
  readonly rounds: readonly Window[];
}

/** The sessions each target's connections use (stateful profile), opened through that target. */
export async function openTargetSessions(
  group: Group,
  connections: number,
): Promise<Map<string, string[] | undefined>> {
  // Every target's sessions at once: nothing is measured yet.
  return new Map(
    await Promise.all(
      group.targets.map(
        async (target) =>
          [
            target.name,
            group.profile === 'stateful'
              ? await Promise.all(Array.from({ length: connections }, () => openSession(target.url)))
              : undefined,
          ] as const,
      ),
    ),
  );
}

/** A cheap check of every answer during load (a full check runs once per target beforehand). */
export function answerCheck(
  kind: MessageKind,
  tools: readonly Record<string, unknown>[],
): (body: string) => boolean {
  if (kind === 'call')
    return (body) => body.includes('"result"') && body.includes('hello from toolpin-bench');
  const first = `"name":${JSON.stringify(tools[0]?.name)}`;
  const last = `"name":${JSON.stringify(tools[tools.length - 1]?.name)}`;
  return (body) => body.includes('"result"') && body.includes(first) && body.includes(last);
}

/** Sends one message and checks the whole answer: the echo text, or every tool of the catalog. */
export async function checkAnswer(
  target: Target,
  kind: MessageKind,
  session: string | undefined,
  tools: readonly Record<string, unknown>[],
): Promise<void> {
  const headers = {
    ...BASE_HEADERS,
    'mcp-protocol-version': '2025-06-18',
    ...(session === undefined ? {} : { 'mcp-session-id': session }),
  };
  const answer = await post(target.url, headers, bodyOf(kind));
  const reply = messagesOf(answer).find((message) => (message as { id?: unknown }).id === 1) as
    { result?: Record<string, unknown> } | undefined;
  const problem = (what: string): Error =>
    new Error(
      `${target.name} answered ${kind} wrongly (${what}): HTTP ${answer.status} ${answer.text.slice(0, 300)}`,
    );
  if (answer.status !== 200 || reply?.result === undefined) throw problem('no result');
  if (kind === 'call') {
    const content = reply.result.content as { text?: string }[] | undefined;
    if (content?.[0]?.text !== 'hello from toolpin-bench') throw problem('not the echo');
    return;
  }
  const listed = reply.result.tools as Record<string, unknown>[] | undefined;
  if (listed === undefined || JSON.stringify(listed) !== JSON.stringify(tools))
    throw problem(`${listed?.length ?? 0} of ${tools.length} tools, or not the same ones`);
}

async function measureWindow(
  group: Group,
  target: Target,
  kind: MessageKind,
  sessions: string[] | undefined,
  seconds: number,
  connections: number,
): Promise<Window> {
  const proxyBefore = target.pid === undefined ? undefined : cpuMicros(target.pid);
  const upstreamBefore = cpuMicros(group.upstream.pid);
  const load = await runLoad({
    url: target.url,
    kind,
    sessions,
    connections,
    seconds,
    check: answerCheck(kind, group.tools),
  });
  const proxyAfter = target.pid === undefined ? undefined : cpuMicros(target.pid);
  const upstreamAfter = cpuMicros(group.upstream.pid);
  const perRequest = (before: number | undefined, after: number | undefined): number | undefined =>
    before === undefined || after === undefined || load.requests === 0
      ? undefined
      : (after - before) / load.requests;
  return {
    ...load,
    proxyCpuUsPerReq: perRequest(proxyBefore, proxyAfter),
    upstreamCpuUsPerReq: perRequest(upstreamBefore, upstreamAfter),
  };
}

function median(values: readonly (number | undefined)[]): number | undefined {
  const defined = values
    .filter((value): value is number => value !== undefined && Number.isFinite(value))
    .sort((a, b) => a - b);
  if (defined.length === 0) return undefined;
  const middle = Math.floor(defined.length / 2);
  return defined.length % 2 === 1
    ? defined[middle]
    : ((defined[middle - 1] as number) + (defined[middle] as number)) / 2;
}

/** Warms up and measures `kind` on every target of the group; throws if any answer was wrong. */
export async function measureMessage(
  group: Group,
  kind: MessageKind,
  sessions: Map<string, string[] | undefined>,
  options: WindowOptions,
): Promise<Measurement[]> {
  await Promise.all(
    group.targets.map((target) => checkAnswer(target, kind, sessions.get(target.name)?.[0], group.tools)),
  );
  // Every target warms up at once: nothing is measured during a warm-up, and each target warms
  // up under the same load (a run of six groups saves 3 warm-up windows per group).
  await Promise.all(
    group.targets.map((target) =>
      runLoad({
        url: target.url,
        kind,
        sessions: sessions.get(target.name),
        connections: options.connections,
        seconds: options.warmupSeconds,
        check: () => true,
      }),
    ),
  );
  const windows = new Map<string, Window[]>(group.targets.map((target) => [target.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (let i = 0; i < group.targets.length; i++) {
      const target = group.targets[(round + i) % group.targets.length] as Target;
      const window = await measureWindow(
        group,
        target,
        kind,
        sessions.get(target.name),
        options.seconds,
        options.connections,
      );
      if (window.failures > 0)
        throw new Error(
          `${target.name} ${kind}: ${window.failures} failed requests in a window; the benchmark is invalid`,
        );
      windows.get(target.name)?.push(window);
    }
  }
  const direct = median((windows.get('direct') ?? []).map((window) => window.reqPerSec)) ?? NaN;
  return group.targets.map((target) => {
    const rounds = windows.get(target.name) ?? [];
    const paired = (baseline: Target['name']): (number | undefined)[] =>
      rounds.map((window, round) => {
        const base = windows.get(baseline)?.[round]?.proxyCpuUsPerReq;
        return window.proxyCpuUsPerReq === undefined || base === undefined
          ? undefined
          : window.proxyCpuUsPerReq / base;
      });
    const reqPerSec = median(rounds.map((window) => window.reqPerSec)) ?? NaN;
    return {
      profile: group.profile,
      tools: group.tools.length,
      message: kind,
      listingBytes: kind === 'list' ? Buffer.byteLength(JSON.stringify({ tools: group.tools })) : undefined,
      target: target.name,
      reqPerSec,
      p50Ms: median(rounds.map((window) => window.p50Ms)) ?? NaN,
      p99Ms: median(rounds.map((window) => window.p99Ms)) ?? NaN,
      proxyCpuUsPerReq: median(rounds.map((window) => window.proxyCpuUsPerReq)),
      upstreamCpuUsPerReq: median(rounds.map((window) => window.upstreamCpuUsPerReq)),
      ratioToDirect: reqPerSec / direct,
      cpuVsPassthrough: median(paired('passthrough')),
      cpuVsFloor: median(paired('floor')),
      cpuVsBaseline: median(paired('baseline')),
      rounds,
    };
  });
}
