import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept, in percent, in
 * a `toolpin serve` process. V8's own factor reaches 4x for a process that allocates fast and
 * collects cheaply: after a burst of sessions (every request's objects that live across a
 * scavenge are promoted) the heap stayed at about 3 times its live size, and V8 did not return
 * it while the gateway sat idle (measured: 10,000 sessions, 36 MB live, 200-240 MB RSS). At 20 %
 * a full collection comes every few MB of promoted objects (tens of ms at this live size).
 */
export const SERVE_HEAP_GROWING_PERCENT = 20;

/**
 * Holds the heap of the gateway process near its live size (see {@link SERVE_HEAP_GROWING_PERCENT}),
 * unless node was started with a heap-growing flag of its own (the operator's choice stands).
 * Only for the process `toolpin serve` owns: the binary calls it, never the library.
 */
export function holdServeHeap(execArgv: readonly string[], nodeOptions: string | undefined): void {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)];
  if (given.some((flag) => /^--heap[-_]growing[-_]percent\b/.test(flag))) return;
  setFlagsFromString(`--heap-growing-percent=${SERVE_HEAP_GROWING_PERCENT}`);
}
