import { spawn, type ChildProcess } from 'node:child_process';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../errors.js';
import { handlerFailure } from './handlerFailure.js';
import { killProcessGroup, trackChild, untrackChild, waitForGroupExit } from './childRegistry.js';
import { DEFAULT_MAX_BRIDGED_MESSAGE_BYTES } from '../defaults.js';
import { LineFramer } from '../wire/lineFramer.js';

/** Options of {@link StdioChildTransport}. */
export interface StdioChildOptions {
  /** The program to run. */
  readonly command: string;
  readonly args: readonly string[];
  /** The child's whole environment (nothing else is inherited). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Receives each line the child writes on stderr (without the newline, cut at 8 KiB). */
  readonly onStderrLine?: (line: string) => void;
  /** How long a child gets to exit after its stdin closes, and again after SIGTERM. @default 2000 */
  readonly graceMs?: number;
  /** Bound on one JSON-RPC line from the child. @default 10 MiB */
  readonly maxMessageBytes?: number;
  /**
   * Runs before the child is spawned and returns the argv to spawn instead of `command` and
   * `args` (the verified artifact, see verifyArtifact); its rejection is start's, nothing spawned.
   */
  readonly prepare?: () => Promise<readonly string[]>;
}

/** How a child ended. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

const MAX_STDERR_LINE = 8 * 1024;
const DEFAULT_GRACE_MS = 2000;

/**
 * An MCP client transport over a spawned child's stdin/stdout. Unlike the SDK's StdioClientTransport
 * it puts the child in its own process group and signals the whole group, so a launcher such as
 * `npx` cannot leave its server behind; it reports how the child exited; and it hands stderr over
 * line by line so the gateway can log it tagged with server and session.
 *
 * `onmessage` receives every JSON value the child writes on a line, as parsed and unvalidated (the
 * SDK's schemas would drop an invalid answer together with the id it answers): the consumer checks
 * it with checkUpstreamMessage. A line that is not JSON is reported to `onerror` and skipped. A
 * handler that throws never reaches the event loop: the error is reported and the child stopped.
 */
export class StdioChildTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: StdioChildOptions;
  readonly #maxMessageBytes: number;
  /** The line being received, before its newline arrives. */
  readonly #lines: LineFramer;
  #failed = false;
  #child: ChildProcess | undefined;
  #exit: ChildExit | undefined;
  #exited: Promise<void> | undefined;
  #closed = false;
  /** close() was called: the child's stdout is read to its end, never held back again. */
  #stopping = false;
  #started = false;

  constructor(options: StdioChildOptions) {
    this.#options = options;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_BRIDGED_MESSAGE_BYTES;
    this.#lines = new LineFramer(this.#maxMessageBytes);
  }

  /** The child's pid once spawned. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How the child ended, once it did. */
  get exit(): ChildExit | undefined {
    return this.#exit;
  }

  /**
   * Spawns the child (after `prepare`, when given); rejects with GW_UPSTREAM_SPAWN_FAILED when it
   * cannot be started, or with what `prepare` rejected with.
   */
  async start(): Promise<void> {
    if (this.#started) throw new Error('StdioChildTransport already started');
    this.#started = true;
    const { prepare } = this.#options;
    if (prepare === undefined) return this.#spawn(this.#options.command, this.#options.args);
    let argv: readonly string[];
    try {
      argv = await prepare();
    } catch (error) {
      this.onerror?.(error as Error);
      throw error;
    }
    return this.#spawn(argv[0] ?? this.#options.command, argv.slice(1));
  }

  #spawn(command: string, args: readonly string[]): Promise<void> {
    const options = this.#options;
    const child = spawn(command, [...args], {
      env: { ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group (POSIX), so the whole tree can be signalled at once.
      detached: process.platform !== 'win32',
      windowsHide: true,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    this.#child = child;
    let groupGone: () => void = () => undefined;
    // Exited means the child closed its pipes and nothing of its process group runs any more.
    this.#exited = Promise.all([
      new Promise<void>((resolve) => child.once('close', () => resolve())),
      new Promise<void>((resolve) => (groupGone = resolve)),
    ]).then(() => undefined);
    child.stdout?.on('data', (chunk: Buffer) => this.#read(chunk));
    child.stdin?.on('error', (error) => this.onerror?.(error));
    this.#readStderr(child);
    child.once('exit', (code, signal) => {
      this.#exit = { code, signal };
      untrackChild(child);
      // Anything the child left running in its group goes with it, and is waited for (bounded):
      // a signal is delivered at once, but a process ends some time after.
      killProcessGroup(child, 'SIGKILL');
      void waitForGroupExit(child, this.#options.graceMs ?? DEFAULT_GRACE_MS).then(groupGone);
    });
    child.once('close', () => {
      this.#closed = true;
      this.onclose?.();
    });
    return new Promise<void>((resolve, reject) => {
      child.once('spawn', () => {
        trackChild(child);
        resolve();
      });
      child.once('error', (error) => {
        // Never spawned: there is no group to wait for.
        groupGone();
        const failure = new GatewayError(
          'GW_UPSTREAM_SPAWN_FAILED',
          `cannot start ${command}: ${error.message}`,
          { command },
          { cause: error },
        );
        this.onerror?.(failure);
        reject(failure);
      });
    });
  }

  #read(chunk: Buffer): void {
    if (this.#failed) return;
    try {
      this.#readLines(chunk);
    } catch (error) {
      // A handler threw: this session fails, the process does not.
      this.#fail(handlerFailure(error));
    }
  }

  /** Hands each complete line of stdout over; keeps what follows the last newline for later. */
  #readLines(chunk: Buffer): void {
    this.#lines.push(chunk, (line) => {
      if (line === undefined) {
        this.#fail(
          new GatewayError(
            'GW_UPSTREAM_INVALID',
            `a message from the upstream exceeds ${this.#maxMessageBytes} bytes`,
          ),
        );
        return false;
      }
      this.#line(line);
      return !this.#failed;
    });
  }

  #line(bytes: Buffer): void {
    const text = bytes.toString('utf8');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // A line that is not JSON (a server logging to stdout): reported, and skipped.
      this.onerror?.(new GatewayError('GW_UPSTREAM_INVALID', "a line on the upstream's stdout is not JSON"));
      return;
    }
    this.onmessage?.(value as JSONRPCMessage);
  }

  /** Ends the session over something it cannot go on from (an unbounded line, a handler failing). */
  #fail(error: Error): void {
    this.#failed = true;
    this.#lines.clear();
    this.onerror?.(error);
    void this.close();
  }

  #readStderr(child: ChildProcess): void {
    let partial = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      if (partial.length > MAX_STDERR_LINE) {
        lines.push(partial);
        partial = '';
      }
      for (const line of lines)
        this.#options.onStderrLine?.(line.replace(/\r$/, '').slice(0, MAX_STDERR_LINE));
    });
    child.stderr?.on('end', () => {
      if (partial !== '') this.#options.onStderrLine?.(partial.slice(0, MAX_STDERR_LINE));
    });
  }

  /**
   * Stops reading the child's stdout (the client's queue is full): once the pipe fills, the child
   * blocks on its writes, as it would before a slow client without the gateway.
   */
  pauseReading(): void {
    if (!this.#closed && !this.#stopping) this.#child?.stdout?.pause();
  }

  resumeReading(): void {
    this.#child?.stdout?.resume();
  }

  /** Writes one message to the child's stdin. */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === undefined || stdin === null || this.#exit !== undefined || !stdin.writable) {
      return Promise.reject(new GatewayError('GW_UPSTREAM_EXITED', 'the upstream process is not running'));
    }
    return new Promise<void>((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Ends the child: stdin is closed (a stdio server's cue to exit), then SIGTERM, then SIGKILL, to
   * the whole process group, each after the grace period. Resolves once the child is gone and,
   * within a further grace period, every process of its group.
   */
  async close(): Promise<void> {
    const child = this.#child;
    if (child === undefined) {
      if (!this.#closed) {
        this.#closed = true;
        this.onclose?.();
      }
      return;
    }
    const exited = this.#exited ?? Promise.resolve();
    // A child held back must be able to finish its writes and exit; its stdout must end for 'close'.
    this.#stopping = true;
    this.resumeReading();
    if (this.#exit === undefined) {
      const grace = this.#options.graceMs ?? DEFAULT_GRACE_MS;
      child.stdin?.end();
      if (!(await settlesWithin(exited, grace))) {
        killProcessGroup(child, 'SIGTERM');
        if (!(await settlesWithin(exited, grace))) killProcessGroup(child, 'SIGKILL');
      }
    }
    await exited;
    this.#lines.clear();
  }
}

async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
