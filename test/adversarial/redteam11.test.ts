import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// Red team 11: listings kept as the chunks they arrived in (jsonResponse.ts, resultEnvelope.ts
// edge()), one tools-by-name map per one-page inspection shared by the sessions it is replayed to
// (sessionCatalog.ts), the binary's heap growth (observe/heapGrowth.ts) and the modules loaded on
// first use (aggregateRoute.ts, pinnedLiveCatalog.ts, pinCommand.ts).

const run = promisify(execFile);
const HEAP_GROWTH = fileURLToPath(
  new URL('../../packages/gateway/dist/observe/heapGrowth.js', import.meta.url),
);

describe('redteam11: the binary sets V8 heap growth unless node was given it (heapGrowth.ts)', () => {
  /** The factor V8 applied after `steadyHeapGrowth` and one full collection, in a node child given `flags`. */
  async function factorWith(flags: readonly string[]): Promise<{ set: boolean; factor: string | undefined }> {
    const script = [
      `const { steadyHeapGrowth } = await import(${JSON.stringify(HEAP_GROWTH)});`,
      'const set = steadyHeapGrowth();',
      'globalThis.gc();',
      'process.stderr.write(`set=${set}\\n`);',
    ].join('\n');
    const { stdout, stderr } = await run(process.execPath, [
      ...flags,
      '--trace-gc-verbose',
      '--expose-gc',
      '--input-type=module',
      '-e',
      script,
    ]);
    const factors = [...stdout.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d)\)/g)].map((m) => m[1]);
    return { set: stderr.includes('set=true'), factor: factors.at(-1) };
  }

  // V8 takes `_` and `-` alike in a flag's name, and one dash as two; node passes each on in execArgv.
  it.each(['--heap_growing_percent=50', '-heap-growing-percent=50'])(
    'attack: node given the flag as %s: left as it is',
    async (flag) => {
      expect(await factorWith([flag])).toEqual({ set: false, factor: '1.5' });
    },
  );
});
