// One group of the benchmark: an upstream (profile + catalog size) and the three ways to reach it,
// each in its own process: directly, through the minimal node:http floor, through the plain
// passthrough, through toolpin.
import { fileURLToPath } from 'node:url';
import { makeCatalog } from './catalog.js';
import { startChild, type Child } from './children.js';
import { startToolpin, type ToolpinTarget } from './toolpinTarget.js';

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

/** Starts an upstream and the three proxies in front of it. `proxyFlags` go to every proxy's node (e.g. --cpu-prof). */
export async function startGroup(
  profile: Profile,
  size: number,
  proxyFlags: readonly string[],
): Promise<Group> {
  const tools = makeCatalog(size);
  const upstream = await startUpstream(profile, size);
  const started: { stop(): Promise<void> }[] = [upstream];
  try {
    const passthrough = await startChild({
      name: 'passthrough',
      nodeFlags: [...TSX, ...proxyFlags],
      args: [script('passthrough.ts'), new URL(upstream.url).origin],
      readyFrom: (output) => /bench-passthrough ready (\S+)/.exec(output)?.[1],
    });
    started.push(passthrough);
    const floor = await startChild({
      name: 'floor',
      nodeFlags: [...TSX, ...proxyFlags],
      // BENCH_FLOOR=parse: the inspecting floor (bench/parseFloor.ts) in the floor's place.
      args: [
        script(process.env.BENCH_FLOOR === 'parse' ? 'parseFloor.ts' : 'floor.ts'),
        new URL(upstream.url).origin,
      ],
      readyFrom: (output) => /bench-floor ready (\S+)/.exec(output)?.[1],
    });
    started.push(floor);
    const toolpin = await startToolpin(upstream.url, tools, proxyFlags);
    started.push(toolpin);
    const baselineCli = process.env.BENCH_BASELINE_CLI;
    const baseline =
      baselineCli === undefined
        ? undefined
        : await startToolpin(upstream.url, tools, proxyFlags, baselineCli);
    if (baseline !== undefined) started.push(baseline);
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
