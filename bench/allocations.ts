// What one proxied request allocates in toolpin: a count that the machine's load does not move
// (CPU time on a shared machine does). A fresh upstream and toolpin (with --trace-gc) per build, a
// warm-up, then exactly N requests of one kind; the young-generation bytes its scavenges freed and
// the bytes promoted, per request, and the process's CPU time per request over the same N (steadier
// than the bench's short windows for large listings, though the machine's load still moves it).
// Compare builds with BENCH_BASELINE_CLI (run one after the other).
// Usage: tsx bench/allocations.ts [stateful|stateless] [call|list] [tools=3] [requests=4000]
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeCatalog } from './catalog.js';
import { cpuMicros, stopAllChildren } from './children.js';
import { sendExactly, type MessageKind } from './load.js';
import { closeHttp, openSession } from './mcpHttp.js';
import { startUpstream, type Profile } from './targets.js';
import { CLI, startToolpin } from './toolpinTarget.js';

const PROFILE_WINDOW = fileURLToPath(new URL('./profileWindow.mjs', import.meta.url));
const profile = (process.argv[2] ?? 'stateful') as Profile;
const kind = (process.argv[3] ?? 'call') as MessageKind;
const size = Number(process.argv[4] ?? 3);
const requests = Number(process.argv[5] ?? 4000);

// BENCH_GC_NVP=1: V8's name=value GC lines (--trace-gc-nvp) in place of --trace-gc, for what each
// scavenge promoted to the old generation (they say no reason for a full collection).
const NVP = process.env.BENCH_GC_NVP === '1';

/** The number after `name=` in a --trace-gc-nvp line. */
const nvpField = (line: string, name: string): number =>
  Number(new RegExp(`(?:^|\\s)${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);

/**
 * Sums the young-generation garbage (before - after of each scavenge, in MB) and, with
 * BENCH_GC_NVP, the bytes the scavenges promoted (objects that outlived two of them).
 */
function gcCounter(): {
  feed(chunk: string): void;
  take(): { scavenged: number; promoted: number; scavenges: number; fullGcs: number; reasons: string };
} {
  let scavenged = 0;
  let promoted = 0;
  let scavenges = 0;
  let fullGcs = 0;
  const reasons = new Map<string, number>();
  return {
    feed: (chunk) => {
      if (NVP) {
        for (const line of chunk.split('\n')) {
          if (/\sgc=(mc|ms|mmc)\s/.test(line)) fullGcs++;
          if (!/\sgc=s\s/.test(line)) continue;
          scavenges++;
          scavenged += (nvpField(line, 'total_size_before') - nvpField(line, 'total_size_after')) / 2 ** 20;
          promoted += nvpField(line, 'promoted');
        }
        return;
      }
      // A full collection's line ends with why it ran (external memory pressure, allocation failure, …).
      for (const match of chunk.matchAll(/Mark-Compact[^\n]*current mu = [\d.]+\) ([^\n]*)/g)) {
        fullGcs++;
        const why = match[1] ?? '?';
        reasons.set(why, (reasons.get(why) ?? 0) + 1);
      }
      for (const match of chunk.matchAll(/Scavenge(?: \([^)]*\))? ([\d.]+) \([\d.]+\) -> ([\d.]+) \(/g)) {
        scavenges++;
        scavenged += Number(match[1]) - Number(match[2]);
      }
    },
    take: () => {
      const why = [...reasons].map(([reason, count]) => `${count} ${reason}`).join(', ');
      const taken = { scavenged, promoted, scavenges, fullGcs, reasons: why };
      scavenged = 0;
      promoted = 0;
      scavenges = 0;
      fullGcs = 0;
      reasons.clear();
      return taken;
    },
  };
}

const send = (url: string, sessions: readonly string[] | undefined, amount: number): Promise<void> =>
  sendExactly(url, kind, sessions, amount);

async function measure(cli: string): Promise<string> {
  const upstream = await startUpstream(profile, size);
  const counter = gcCounter();
  // BENCH_NODE_FLAGS adds flags to toolpin's node, e.g. --heap-prof for the allocation sites.
  const flags = [
    NVP ? '--trace-gc-nvp' : '--trace-gc',
    ...(process.env.BENCH_CPU_PROFILE === undefined ? [] : ['--import', PROFILE_WINDOW]),
    ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
  ];
  const toolpin = await startToolpin(upstream.url, makeCatalog(size), flags, cli, counter.feed);
  try {
    const sessions =
      profile === 'stateful'
        ? await Promise.all(Array.from({ length: 8 }, () => openSession(toolpin.url)))
        : undefined;
    await send(toolpin.url, sessions, Math.max(Math.min(500, requests), requests / 4));
    await new Promise((resolve) => setTimeout(resolve, 200));
    counter.take();
    const pid = toolpin.child.pid;
    const cpuBefore = cpuMicros(pid) ?? 0;
    // BENCH_STRACE=<file>: the syscalls of exactly these requests (strace -c on toolpin's pid).
    const strace =
      process.env.BENCH_STRACE === undefined || pid === undefined
        ? undefined
        : spawn('strace', ['-c', '-f', '-p', String(pid), '-o', process.env.BENCH_STRACE], {
            stdio: 'ignore',
          });
    if (strace !== undefined) await new Promise((resolve) => setTimeout(resolve, 500));
    // BENCH_CPU_PROFILE=<dir>: a CPU profile of exactly these requests (bench/profileWindow.mjs).
    const profiled = process.env.BENCH_CPU_PROFILE !== undefined && pid !== undefined;
    if (profiled) process.kill(pid, 'SIGUSR2');
    await send(toolpin.url, sessions, requests);
    if (profiled) process.kill(pid, 'SIGUSR2');
    if (strace !== undefined) {
      const stopped = new Promise((resolve) => strace.once('exit', resolve));
      strace.kill('SIGINT');
      await stopped;
    }
    const cpu = ((cpuMicros(pid) ?? 0) - cpuBefore) / requests;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { scavenged, promoted, scavenges, fullGcs, reasons } = counter.take();
    const promotedNote = NVP ? `, ${(promoted / requests / 1024).toFixed(2)} KB promoted` : '';
    return `${((scavenged * 2 ** 20) / requests / 1024).toFixed(1)} KB young garbage${promotedNote} per request (${scavenges} scavenges, ${fullGcs} full collections${reasons === '' ? '' : `: ${reasons}`}, for ${requests}), ${cpu.toFixed(0)} us CPU per request`;
  } finally {
    await toolpin.stop();
    await upstream.stop();
  }
}

try {
  for (const [name, cli] of [
    ['toolpin', CLI],
    ...(process.env.BENCH_BASELINE_CLI === undefined ? [] : [['baseline', process.env.BENCH_BASELINE_CLI]]),
  ] as const)
    process.stdout.write(`${profile} tools/${kind} (${size} tools) ${name}: ${await measure(cli)}\n`);
} finally {
  await stopAllChildren();
  closeHttp();
}
