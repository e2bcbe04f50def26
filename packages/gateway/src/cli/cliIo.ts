import type { Readable, Writable } from 'node:stream';

/** The process signals a long-running command (serve, wrap) answers. */
export type CliSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/**
 * Everything a command touches outside its options: where it reads and writes, the signals it
 * answers and how it ends the process. The binary passes {@link processIo}; a test passes its own
 * streams and records the exit, so a command runs in-process exactly as it runs in the binary.
 */
export interface CliIo {
  readonly stdin: Readable & { readonly isTTY?: boolean };
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** Where serve, wrap and review listen for SIGINT, SIGTERM and SIGHUP (every other command for the first two: cli/stopOnSignal.ts). */
  readonly signals: {
    on(signal: CliSignal, listener: () => void): unknown;
    once(signal: CliSignal, listener: () => void): unknown;
    off(signal: CliSignal, listener: () => void): unknown;
  };
  /**
   * Ends the process now. Only serve and wrap call it, once they stopped (an open stdin or a
   * socket still closing would otherwise keep the process alive); every other command returns its
   * exit code and lets the process end when its output is flushed.
   */
  exit(code: number): void;
}

/** The io of the `toolpin` binary: the process's own streams, signals and exit. */
export function processIo(): CliIo {
  return {
    // Getters: stdin is opened only by the command that reads it.
    get stdin() {
      return process.stdin;
    },
    get stdout() {
      return process.stdout;
    },
    get stderr() {
      return process.stderr;
    },
    signals: process,
    exit: (code) => process.exit(code),
  };
}
