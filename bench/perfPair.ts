// On-CPU time of each proxy of one group, from Linux perf's cpu-clock: a sample is taken only while
// a thread runs, so time a thread spends preempted by its peers is not charged to the function it
// was in (V8's own profiler samples wall time). Every thread counts: V8's helper threads (TurboFan,
// GC) are split out. A main-thread sample goes to the first JavaScript frame on its stack, with the
// native code under it (node's C++, V8's builtins, the kernel's side of a syscall).
// Needs `perf` (Debian: linux-perf) and the right to profile the children (root, or a low
// kernel.perf_event_paranoid). The profilers' overhead raises every figure: compare within a run.
// Usage: [BENCH_FLOOR=parse] tsx bench/perfPair.ts [stateful|stateless] [call|list] [tools=3] [requests=8000] [top=25]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros, stopAllChildren } from './children.js';
import { sendExactly, type MessageKind } from './load.js';
import { closeHttp, openSession } from './mcpHttp.js';
import { categoryOfFrame } from './profileNames.js';
import { startGroup, type Profile } from './targets.js';

const profile = (process.argv[2] ?? 'stateful') as Profile;
const kind = (process.argv[3] ?? 'call') as MessageKind;
const size = Number(process.argv[4] ?? 3);
const requests = Number(process.argv[5] ?? 8000);
const top = Number(process.argv[6] ?? 25);
// 10 kHz: one sample is 100 us of CPU.
const SAMPLE_MICROS = 100;

const send = (url: string, sessions: readonly string[] | undefined, amount: number): Promise<void> =>
  sendExactly(url, kind, sessions, amount);

/** Where one sample's CPU went: its owner (category) and, on the main thread, its JS function. */
function ownerOf(main: boolean, frames: readonly string[]): { owner: string; fn?: string } {
  const stack = frames.join('\n');
  if (!main) {
    if (/OptimizingCompileDispatcher|compiler::/.test(stack)) return { owner: 'helper threads: TurboFan' };
    if (/Scaveng|Marking|Sweep|Heap::|Evacuat/.test(stack)) return { owner: 'helper threads: GC' };
    return { owner: 'helper threads: other' };
  }
  for (const frame of frames) {
    // --perf-basic-prof names: "JS:*name url:line:column" (the mark says which tier).
    const js = /^JS:[*~^+]?(.*?) ?((?:node:|file:)\S*?)(?::\d+:\d+)?$/.exec(frame);
    if (js === null) continue;
    const [, name = '', url = ''] = js;
    const fn = `${name || '(anonymous)'} ${url.replace(/^.*\/(node_modules|packages)\//, '$1/')}`;
    return { owner: categoryOfFrame(url, name), fn };
  }
  if (/Scaveng|Marking|Heap::/.test(stack)) return { owner: 'GC (main thread)' };
  return { owner: 'native, no JS on the stack' };
}

/** Sums a perf.data file by owner and by function, in us per request. */
function summarize(file: string): { total: number; owners: Map<string, number>; fns: Map<string, number> } {
  const script = spawnSync('perf', ['script', '-i', file, '-F', 'pid,tid,ip,sym'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const owners = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (const sample of script.stdout.split('\n\n')) {
    const [head, ...rest] = sample.trim().split('\n');
    const ids = /(\d+)\/(\d+)/.exec(head ?? '');
    if (ids === null) continue;
    const frames = rest.map((line) => line.trim().replace(/^[0-9a-f]+ /, ''));
    const { owner, fn } = ownerOf(ids[1] === ids[2], frames);
    const micros = SAMPLE_MICROS / requests;
    total += micros;
    owners.set(owner, (owners.get(owner) ?? 0) + micros);
    if (fn !== undefined) fns.set(fn, (fns.get(fn) ?? 0) + micros);
  }
  return { total, owners, fns };
}

const print = (title: string, map: Map<string, number>, limit: number): void => {
  process.stdout.write(`  ${title}\n`);
  for (const [name, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, limit))
    process.stdout.write(`  ${micros.toFixed(1).padStart(8)} us  ${name}\n`);
};

const dir = mkdtempSync(join(tmpdir(), 'toolpin-perf-'));
// The JIT's code map for perf (/tmp/perf-<pid>.map), without V8's log file in the working directory.
const group = await startGroup(profile, size, [
  '--perf-basic-prof',
  '--logfile=/dev/null',
  '--no-logfile-per-isolate',
]);
try {
  for (const target of group.targets) {
    if (target.pid === undefined) continue;
    const sessions =
      profile === 'stateful'
        ? await Promise.all(Array.from({ length: 8 }, () => openSession(target.url)))
        : undefined;
    await send(target.url, sessions, Math.max(500, requests / 4));
    const file = join(dir, `${target.name}.data`);
    const perf = spawn(
      'perf',
      ['record', '-e', 'cpu-clock', '-F', '10000', '-g', '-p', String(target.pid), '-o', file],
      { stdio: 'ignore' },
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = cpuMicros(target.pid) ?? 0;
    await send(target.url, sessions, requests);
    const cpu = ((cpuMicros(target.pid) ?? 0) - before) / requests;
    const stopped = new Promise((resolve) => perf.once('exit', resolve));
    perf.kill('SIGINT');
    await stopped;
    const { total, owners, fns } = summarize(file);
    process.stdout.write(
      `\n${target.name}: ${cpu.toFixed(0)} us CPU per request (under perf), ${total.toFixed(0)} us sampled\n`,
    );
    print(
      'by owner (main thread: the first JS frame on the stack, with the native code under it)',
      owners,
      30,
    );
    print('by JS function (main thread)', fns, top);
  }
} finally {
  await group.stop();
  await stopAllChildren();
  closeHttp();
  rmSync(dir, { recursive: true, force: true });
}
