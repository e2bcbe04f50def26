import { EventEmitter } from 'node:events';
import { Readable, Writable } from 'node:stream';
import type { CliIo } from '../../src/cli/cliIo.js';

/** A {@link CliIo} for running a command in-process: output captured, signals sent by the test. */
export interface CapturedIo extends CliIo {
  /** Everything written so far. */
  readonly written: { stdout: string; stderr: string };
  /** Each code the command passed to `exit`, in order. */
  readonly exits: number[];
  /** Emit `SIGTERM` (and the others) here to signal the command. */
  readonly signals: EventEmitter;
}

function collector(append: (text: string) => void): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      append(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      callback();
    },
  });
}

/**
 * An io whose stdout and stderr are collected, whose stdin is `stdin` (default: empty and closed,
 * as when the binary runs with stdin from /dev/null: not a terminal) and whose exit is recorded.
 */
export function captureIo(stdin: Readable = Readable.from([])): CapturedIo {
  const written = { stdout: '', stderr: '' };
  const exits: number[] = [];
  return {
    stdin,
    stdout: collector((text) => (written.stdout += text)),
    stderr: collector((text) => (written.stderr += text)),
    signals: new EventEmitter(),
    exit: (code) => {
      exits.push(code);
    },
    written,
    exits,
  };
}
