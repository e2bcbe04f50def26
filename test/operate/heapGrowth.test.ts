// The `toolpin` binary fixes V8's heap growing factor (observe/heapGrowth.ts). V8's flags are the
// process's, so each case runs in a node child of its own (the suite's process is left as it
// was), and V8 itself says which factor it applied: with --trace-gc-verbose it prints the limit it
// sets after a full collection ("[HeapController] Limit: old size: 2623 KB, new limit: ... (4.0)").
// Each child runs with --optimize-for-size, under which V8 on its own grows by at most 1.3.
import { fileURLToPath } from 'node:url';
import { runProcess } from '../support/runToolpin.js';

const MODULE = fileURLToPath(new URL('../../packages/gateway/dist/observe/heapGrowth.js', import.meta.url));

/** Whether `steadyHeapGrowth` set the flag, and the factor V8 applied at the full collection after it. */
async function factorAfter(
  nodeFlags: readonly string[],
): Promise<{ set: boolean; factor: string | undefined }> {
  const script = [
    `const { steadyHeapGrowth } = await import(${JSON.stringify(MODULE)});`,
    'const set = steadyHeapGrowth();',
    'globalThis.gc();',
    'process.stderr.write(`set=${set}\\n`);',
  ].join('\n');
  const { code, stdout, stderr } = await runProcess(process.execPath, [
    ...nodeFlags,
    '--optimize-for-size',
    '--trace-gc-verbose',
    '--expose-gc',
    '--input-type=module',
    '-e',
    script,
  ]);
  if (code !== 0) throw new Error(`the node child exited with ${code}: ${stderr}`);
  // The collection's own line comes after the flag was set: the last factor is the one applied.
  const factors = [...stdout.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d)\)/g)].map((match) => match[1]);
  return { set: stderr.includes('set=true'), factor: factors.at(-1) };
}

describe("the toolpin binary's heap growth", () => {
  it('lets the old generation grow to four times what a full collection left live, whatever V8 would choose', async () => {
    expect(await factorAfter([])).toEqual({ set: true, factor: '4.0' });
  });

  // V8 takes `_` and `-` alike in a flag's name, and one dash as two; node passes each on in
  // execArgv (red team 11: the other spellings were overridden).
  it.each(['--heap-growing-percent=50', '--heap_growing_percent=50', '-heap-growing-percent=50'])(
    'leaves the flag given to node as %s as it is',
    async (flag) => {
      expect(await factorAfter([flag])).toEqual({ set: false, factor: '1.5' });
    },
  );
});
