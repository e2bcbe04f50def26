// Every process of the benchmark (the upstream, each proxy) runs as a child of its own, so the
// CPU a proxy spends is measured alone. Children are tracked here and all killed at the end,
// also on errors and on SIGINT/SIGTERM: a benchmark must not leave servers behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A running child process and the URL it serves. */
export interface Child {
  readonly name: string;
  readonly pid: number;
  readonly url: string;
  readonly process: ChildProcess;
  /** Stops the child gracefully (SIGTERM; SIGKILL after a grace period) and awaits its exit. */
  stop(): Promise<void>;
}

/** How to start a child and how to learn its URL. */
export interface ChildSpec {
  readonly name: string;
  readonly args: readonly string[];
  /** Extra node flags (e.g. --cpu-prof). */
  readonly nodeFlags?: readonly string[];
  /** Extracts the URL from the child's output (stdout and stderr) once it is listening. */
  readonly readyFrom: (output: string) => string | undefined;
  /** Receives every chunk of output after start-up (log lines, for counting events). */
  readonly onOutput?: (chunk: string) => void;
  /** @default 30000 */
  readonly readyTimeoutMs?: number;
}

const live = new Set<Child>();

/** Starts a node child and resolves once it prints the line `readyFrom` recognizes. */
export function startChild(spec: ChildSpec): Promise<Child> {
  const child = spawn(process.execPath, [...(spec.nodeFlags ?? []), ...spec.args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  let output = '';
  let ready = false;
  return new Promise<Child>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        fail(new Error(`${spec.name} did not start within ${spec.readyTimeoutMs ?? 30000} ms:\n${output}`)),
      spec.readyTimeoutMs ?? 30_000,
    );
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const fail = (error: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.once('error', fail);
    const early = (code: number | null, signal: string | null): void =>
      fail(new Error(`${spec.name} exited early (${code ?? signal}):\n${output}`));
    child.once('exit', early);
    const onChunk = (chunk: string): void => {
      if (ready) {
        spec.onOutput?.(chunk);
        return;
      }
      output += chunk;
      const url = spec.readyFrom(output);
      if (url === undefined || child.pid === undefined) return;
      ready = true;
      clearTimeout(timer);
      child.off('exit', early);
      const handle: Child = {
        name: spec.name,
        pid: child.pid,
        url,
        process: child,
        stop: async () => {
          live.delete(handle);
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
          await exited;
          clearTimeout(killer);
        },
      };
      live.add(handle);
      resolve(handle);
    };
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', onChunk);
    }
  });
}

/** Stops every child still running. */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...live].map((child) => child.stop()));
}

/** Kills every child at once (the process is exiting and cannot wait). */
function killAllNow(): void {
  for (const child of live) child.process.kill('SIGKILL');
  live.clear();
}

process.once('exit', killAllNow);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping children\n`);
    killAllNow();
    process.exit(130);
  });
}

/** CPU time (user + system) a process has used so far, in microseconds, or undefined off Linux. */
export function cpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesized command name; utime and stime are the 12th and 13th of them.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1_000_000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in bytes, or undefined off Linux. */
export function rssBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

// USER_HZ is 100 on every Linux ABI Node supports.
const CLOCK_TICKS = 100;
