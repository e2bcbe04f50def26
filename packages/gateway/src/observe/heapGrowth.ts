import v8 from 'node:v8';

/** How far V8 lets the old generation grow past what a full collection left live, in percent. */
export const HEAP_GROWING_PERCENT = 300;

const FLAG = '--heap-growing-percent';
// A V8 flag as node passes it on: one or two dashes, `_` or `-` between words, `=value` or not.
const GIVEN = /^--?heap[-_]growing[-_]percent(?:=|$)/;

/**
 * Fixes how far V8 lets the gateway's old generation grow between full collections: to four times
 * what the last one left live, the most V8's own factor gives (it goes from 1.1 to 4 with how fast
 * the program allocated and how fast it collected, and 1.3 at most after its memory reducer ran).
 * Left to itself, after a full collection at a time of little old-space allocation (the memory
 * reducer once the gateway went quiet, or the idle heap release) V8 set the next limit at about
 * 1.3 times the live heap (38 MB live, 51 MB limit): less headroom than its young generation's
 * capacity (16 MB), which makes V8 start the next incremental marking as soon as one ends, and that
 * lasted for as long as the load did. Its helper threads then marked the whole heap over and over:
 * 6 ms of CPU per 500-tool listing, more than doubling what one costs. Twice the live heap
 * (100 %) ended that too, but cost small listings 5-47 % more CPU than V8's own choice
 * (docs/benchmark.md, run I). V8 reads this flag every time it sets the limit, so setting it at
 * start-up holds for the whole process. A `--heap-growing-percent` given to node itself is left as
 * it is, in any spelling V8 reads (one dash or two, `_` or `-`). Only the `toolpin` binary calls
 * this: an embedding's process is its host's. Returns true when the flag was set here.
 */
export function steadyHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => GIVEN.test(arg))) return false;
  v8.setFlagsFromString(`${FLAG}=${HEAP_GROWING_PERCENT}`);
  return true;
}
