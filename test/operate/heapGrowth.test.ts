// The `toolpin` binary fixes V8's heap growing factor (observe/heapGrowth.ts). V8's flags are the
// process's, so each case runs in a node child of its own (the suite's process is left as it
// was), and V8 itself says which factor it applied: with --trace-gc-verbose it prints the limit it
// sets after a full collection ("[HeapController] Limit: old size: 2623 KB, new limit: ... (2.0)").
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MODULE = fileURLToPath(new URL('../../packages/gateway/dist/observe/heapGrowth.js', import.meta.url));

/** The factors V8 printed for the old generation after `steadyHeapGrowth` and one full collection. */
async function factorsAfter(nodeFlags: readonly string[]): Promise<{ set: boolean; factors: string[] }> {
  const script = [
    `const { steadyHeapGrowth } = await import(${JSON.stringify(MODULE)});`,
    'const set = steadyHeapGrowth();',
    'globalThis.gc();',
    'process.stderr.write(`set=${set}\\n`);',
  ].join('\n');
  const { stdout, stderr } = await run(process.execPath, [
    ...nodeFlags,
    '--trace-gc-verbose',
    '--expose-gc',
    '--input-type=module',
    '-e',
    script,
  ]);
  // The collection's own lines come after the flag was set: the last factor is the one applied.
  const factors = [...stdout.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d)\)/g)].map(
    (match) => match[1] ?? '',
  );
  return { set: stderr.includes('set=true'), factors };
}

describe("the toolpin binary's heap growth", () => {
  it('lets the old generation grow to twice what a full collection left live', async () => {
    const { set, factors } = await factorsAfter([]);
    expect(set).toBe(true);
    expect(factors.at(-1)).toBe('2.0');
  });

  it('leaves a --heap-growing-percent given to node as it is', async () => {
    const { set, factors } = await factorsAfter(['--heap-growing-percent=50']);
    expect(set).toBe(false);
    expect(factors.at(-1)).toBe('1.5');
  });
});
