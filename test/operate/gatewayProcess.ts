import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** packages/gateway/dist/cli/main.js: the real `toolpin` command (built by `tsc -b`). */
export const TOOLPIN_MAIN = fileURLToPath(
  new URL('../../packages/gateway/dist/cli/main.js', import.meta.url),
);

/** One JSON log line of a gateway process. */
export type ProcessLogLine = Record<string, unknown> & { event?: string };

/** A `toolpin serve` child process on free ports. */
export interface GatewayProcess {
  /** Base URL of the MCP listener (from the `gateway.started` line). */
  readonly url: string;
  /** Base URL of the admin listener. */
  readonly adminUrl: string;
  readonly pid: number;
  readonly logs: ProcessLogLine[];
  /** Log lines with this `event`. */
  events(event: string): ProcessLogLine[];
  /**
   * Resolves with the first log line with this `event`, from line `from` of {@link logs} on (all
   * lines by default; a process shared by several tests passes `logs.length` taken before its
   * request), bounded by the test's timeout.
   */
  waitForEvent(event: string, from?: number): Promise<ProcessLogLine>;
  signal(signal: NodeJS.Signals): void;
  /** Resolves with the exit code once the process exited. */
  readonly exited: Promise<number | null>;
  /** SIGKILLs the process if it still runs, and waits for it. */
  kill(): Promise<void>;
}

/** The gateway folder a `toolpin serve` child starts from (shared with the in-process harness). */
export { writeGatewayFiles } from '../support/gatewayFiles.js';

/**
 * Runs `node [nodeFlags…] packages/gateway/dist/cli/main.js serve --config <file> --port 0
 * --admin-port 0` and waits for `gateway.started`.
 */
export async function spawnGateway(file: string, nodeFlags: readonly string[] = []): Promise<GatewayProcess> {
  const child = spawn(
    process.execPath,
    [...nodeFlags, TOOLPIN_MAIN, 'serve', '--config', file, '--port', '0', '--admin-port', '0'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logs: ProcessLogLine[] = [];
  const waiters: { event: string; resolve: (line: ProcessLogLine) => void }[] = [];
  let stderr = '';
  let buffered = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const text of lines.filter((l) => l.trim() !== '')) {
      const line = JSON.parse(text) as ProcessLogLine;
      logs.push(line);
      for (const waiter of waiters.filter((w) => w.event === line.event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const waitForEvent = (event: string, from = 0): Promise<ProcessLogLine> => {
    const seen = logs.slice(from).find((line) => line.event === event);
    return seen !== undefined
      ? Promise.resolve(seen)
      : new Promise((resolve) => waiters.push({ event, resolve }));
  };
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const started = await Promise.race([
    waitForEvent('gateway.started'),
    exited.then((code) => {
      throw new Error(`toolpin serve exited with ${code} before listening:\n${stderr}`);
    }),
  ]).catch(async (error: unknown) => {
    await kill();
    throw error;
  });
  return {
    url: String(started.url),
    adminUrl: String(started.admin),
    pid: child.pid ?? -1,
    logs,
    events: (event) => logs.filter((line) => line.event === event),
    waitForEvent,
    signal: (signal) => child.kill(signal),
    exited,
    kill,
  };
}
