import v8 from 'node:v8';

/** How far V8 lets the old generation grow past what a full collection left live, in percent. */
export const HEAP_GROWING_PERCENT = 100;

const FLAG = '--heap-growing-percent';
// A V8 flag as node passes it on: one or two dashes, `_` or `-` between words, `=value` or not.
const GIVEN = /^--?heap[-_]growing[-_]percent(?:=|$)/;

/**
 * Fixes how far V8 lets the gateway's old generation grow between full collections: to twice
 * what the last one left live (V8's own factor is 1.1 to 4, from how fast the program allocated
 * and how fast it collected). Without it, after a full collection at a time of little old-space
 * allocation (V8's memory reducer once the gateway went quiet, or the idle heap release) V8 set
 * the next limit at about 1.3 times the live heap (38 MB live, 51 MB limit): less headroom than
 * its young generation's capacity (16 MB), which makes V8 start the next incremental marking as
 * soon as one ends, and that lasted for as long as the load did. Its helper threads then marked
 * the whole heap over and over: 6 ms of CPU per 500-tool listing, more than doubling what one
 * costs (docs/benchmark.md, run I). V8 reads this flag every time it sets the limit, so setting
 * it at start-up holds for the whole process. A `--heap-growing-percent` given to node itself is
 * left as it is, in any spelling V8 reads (one dash or two, `_` or `-`). Only the
 * `toolpin` binary calls this: an embedding's process is its host's.
 * Returns true when the flag was set here.
 */
export function steadyHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((arg) => GIVEN.test(arg))) return false;
  v8.setFlagsFromString(`${FLAG}=${HEAP_GROWING_PERCENT}`);
  return true;
}
