// One group of the benchmark: an upstream (profile + catalog size) and the three ways to reach it,
// each in its own process: directly, through the minimal node:http floor, through the plain
// passthrough, through toolpin.
import { fileURLToPath } from 'node:url';
import { makeCatalog } from './catalog.js';
import { startChild, type Child } from './children.js';
import { CLI, startToolpin, type ToolpinTarget } from './toolpinTarget.js';

/** The upstream's session model and answer framing. */
export type Profile = 'stateful' | 'stateless';

/** The names of the targets, in the order they are first measured. */
export const TARGET_NAMES = ['direct', 'floor', 'passthrough', 'toolpin', 'baseline'] as const;

/** One way to reach the upstream. */
export interface Target {
  readonly name: (typeof TARGET_NAMES)[number];
  readonly url: string;
  /** The proxy's process (none for direct). */
  readonly pid: number | undefined;
}

/** The processes of one group. */
export interface Group {
  readonly profile: Profile;
  readonly tools: readonly Record<string, unknown>[];
  readonly upstream: Child;
  readonly toolpin: ToolpinTarget;
  readonly targets: readonly Target[];
  stop(): Promise<void>;
}

const script = (name: string): string => fileURLToPath(new URL(`./${name}`, import.meta.url));
const TSX = ['--import', 'tsx'];

/** Starts the upstream (profile, catalog size) in its own process. */
export function startUpstream(profile: Profile, size: number): Promise<Child> {
  return startChild({
    name: `upstream-${profile}-${size}`,
    nodeFlags: TSX,
    args: [script('upstream.ts'), profile, String(size)],
    readyFrom: (output) => /bench-upstream ready (\S+)/.exec(output)?.[1],
  });
}

/** Awaits every start; if one fails, stops the processes that did start and rethrows. */
async function startAll(
  starting: readonly Promise<{ stop(): Promise<void> }>[],
  started: { stop(): Promise<void> }[],
): Promise<void> {
  const settled = await Promise.allSettled(starting);
  for (const result of settled) if (result.status === 'fulfilled') started.push(result.value);
  const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/**
 * Starts an upstream and the proxies in front of it. `proxyFlags` go to every proxy's node (e.g.
 * --cpu-prof). The proxies start side by side (each needs only the upstream's URL): seconds less
 * per group than one after the other, and nothing is measured while they start.
 */
export async function startGroup(
  profile: Profile,
  size: number,
  proxyFlags: readonly string[],
): Promise<Group> {
  const tools = makeCatalog(size);
  const upstream = await startUpstream(profile, size);
  const started: { stop(): Promise<void> }[] = [upstream];
  try {
    const origin = new URL(upstream.url).origin;
    const baselineCli = process.env.BENCH_BASELINE_CLI;
    const starting = {
      passthrough: startChild({
        name: 'passthrough',
        nodeFlags: [...TSX, ...proxyFlags],
        args: [script('passthrough.ts'), origin],
        readyFrom: (output) => /bench-passthrough ready (\S+)/.exec(output)?.[1],
      }),
      floor: startChild({
        name: 'floor',
        nodeFlags: [...TSX, ...proxyFlags],
        // BENCH_FLOOR=parse: the inspecting floor (bench/parseFloor.ts) in the floor's place.
        args: [script(process.env.BENCH_FLOOR === 'parse' ? 'parseFloor.ts' : 'floor.ts'), origin],
        readyFrom: (output) => /bench-floor ready (\S+)/.exec(output)?.[1],
      }),
      toolpin: startToolpin(upstream.url, tools, proxyFlags, CLI, undefined, false),
      baseline:
        baselineCli === undefined
          ? undefined
          : startToolpin(upstream.url, tools, proxyFlags, baselineCli, undefined, false),
    };
    await startAll(
      Object.values(starting).filter((start) => start !== undefined),
      started,
    );
    const [passthrough, floor, toolpin, baseline] = await Promise.all([
      starting.passthrough,
      starting.floor,
      starting.toolpin,
      starting.baseline,
    ]);
    return {
      profile,
      tools,
      upstream,
      toolpin,
      targets: [
        { name: 'direct', url: upstream.url, pid: undefined },
        { name: 'floor', url: floor.url, pid: floor.pid },
        { name: 'passthrough', url: passthrough.url, pid: passthrough.pid },
        { name: 'toolpin', url: toolpin.url, pid: toolpin.child.pid },
        ...(baseline === undefined
          ? []
          : [{ name: 'baseline' as const, url: baseline.url, pid: baseline.child.pid }]),
      ],
      // The proxies first, so the upstream never sees them lose their connections mid-request.
      stop: async () => {
        for (const process of started.reverse()) await process.stop();
      },
    };
  } catch (error) {
    for (const process of started.reverse()) await process.stop();
    throw error;
  }
}
