// toolpin as the benchmark runs it: the real `toolpin serve` command (packages/gateway/dist) in its
// own process, in enforce mode, with a generated gateway file and a pin that matches the upstream's
// catalog, so every tool is verified and every call allowed. Its JSON log lines are counted: any
// drift, block or upstream failure makes the run invalid.
import { readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRACE_PROFILE } from '@toolpin/digest';
import { pinFromCatalog } from '@toolpin/gateway/pin';
import { startChild, type Child } from './children.js';

/** The running gateway, its route, and the events it logged. */
export interface ToolpinTarget {
  readonly child: Child;
  /** The MCP endpoint of the benchmarked server, e.g. http://127.0.0.1:PORT/bench/mcp */
  readonly url: string;
  /** How many log lines carried each `event` so far. */
  readonly events: Map<string, number>;
  stop(): Promise<void>;
}

// BENCH_TOOLPIN_CLI runs another build or wrapper of the CLI (A/B experiments); BENCH_BASELINE_CLI
// adds a fifth target, `baseline`, running that other build beside this one in the same rounds.
export const CLI =
  process.env.BENCH_TOOLPIN_CLI ??
  fileURLToPath(new URL('../packages/gateway/dist/cli/main.js', import.meta.url));

/** A pin-file object approving exactly `tools` for the upstream at `url` (as `toolpin pin` writes it, any size). */
function pinFile(url: string, tools: readonly Record<string, unknown>[]): Record<string, unknown> {
  const { pin, definitions } = pinFromCatalog(tools, TRACE_PROFILE);
  return {
    name: 'bench',
    upstream: { url },
    mode: 'enforce',
    profile: TRACE_PROFILE,
    onDrift: 'filter',
    pin,
    definitions,
  };
}

/** Counts the `event` of each complete JSON log line; a line split across chunks is joined first. */
function eventCounter(events: Map<string, number>): (chunk: string) => void {
  let partial = '';
  return (chunk) => {
    const text = partial + chunk;
    const end = text.lastIndexOf('\n') + 1;
    partial = text.slice(end);
    for (const match of text.slice(0, end).matchAll(/"event":"([^"]+)"/g)) {
      const name = match[1] as string;
      events.set(name, (events.get(name) ?? 0) + 1);
    }
  };
}

/** True when the build of `cli` has `serve --no-heap-release` (builds before it have no release). */
function knowsHeapRelease(cli: string): boolean {
  try {
    return readFileSync(join(dirname(cli), 'serveCommand.js'), 'utf8').includes('--no-heap-release');
  } catch {
    return false;
  }
}

/**
 * Starts `toolpin serve` pinned to `tools` in front of `upstreamUrl`. `nodeFlags` e.g. --cpu-prof.
 * `heapRelease: false` turns off the collections an idle gateway runs (serve's default): the rows
 * leave each proxy idle between its windows, and a collection there would take toolpin's garbage
 * out of the windows it is measured in (the other proxies have none).
 */
export async function startToolpin(
  upstreamUrl: string,
  tools: readonly Record<string, unknown>[],
  nodeFlags: readonly string[] = [],
  cli: string = CLI,
  onOutput?: (chunk: string) => void,
  heapRelease = true,
): Promise<ToolpinTarget> {
  const dir = await mkdtemp(join(tmpdir(), 'toolpin-bench-'));
  await mkdir(join(dir, 'servers'));
  await writeFile(join(dir, 'servers', 'bench.json'), JSON.stringify(pinFile(upstreamUrl, tools)));
  const gatewayFile = join(dir, 'gateway.json');
  await writeFile(
    gatewayFile,
    JSON.stringify({
      listen: { host: '127.0.0.1', port: 0 },
      admin: { host: '127.0.0.1', port: 0 },
      servers: './servers',
      log: { level: 'info' },
    }),
  );
  const events = new Map<string, number>();
  let child: Child;
  try {
    child = await startChild({
      name: 'toolpin',
      args: [
        cli,
        'serve',
        '--config',
        gatewayFile,
        ...(heapRelease || !knowsHeapRelease(cli) ? [] : ['--no-heap-release']),
      ],
      nodeFlags,
      // toolpin reads and verifies the pin file before it listens: a 5,000-tool pin (8 MB of strict
      // YAML/JSON) takes seconds, more on a busy machine.
      readyTimeoutMs: 30_000 + tools.length * 20,
      readyFrom: (output) => /"event":"gateway\.started".*?"url":"(http:[^"]+)"/.exec(output)?.[1],
      onOutput: onOutput ?? eventCounter(events),
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    child,
    url: `${child.url}/bench/mcp`,
    events,
    stop: async () => {
      await child.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
