import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { defaultTools, startV1Server } from '../peers/index.js';
import { writeGatewayFiles } from '../support/gatewayFiles.js';
import { pinFor } from '../support/pinFor.js';

// Red team 11: listings kept as the chunks they arrived in (jsonResponse.ts, resultEnvelope.ts
// edge()), one tools-by-name map per one-page inspection shared by the sessions it is replayed to
// (sessionCatalog.ts), the binary's heap growth (observe/heapGrowth.ts) and the modules loaded on
// first use (aggregateRoute.ts, pinnedLiveCatalog.ts, pinCommand.ts).

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../packages/gateway/dist/cli/main.js', import.meta.url));
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

describe('redteam11: the aggregate route’s module loaded by its first request (aggregateRoute.ts)', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-rt11-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * `toolpin serve` (the built binary) of a gateway file with an aggregate block, in a node whose
   * module loader cannot find `ingress/aggregateFront.js` (an install missing it, or the v2 SDK it
   * imports): what each era's first request to /mcp gets, and what the gateway logged meanwhile.
   */
  async function serveWithoutAggregateModule(): Promise<{
    replies: { status: number; type: string | null; body: string }[];
    logged: string;
    code: number | null;
  }> {
    const hook = join(dir, 'missingAggregate.mjs');
    const resolver = [
      'export async function resolve(specifier, context, next) {',
      "  if (specifier.endsWith('/aggregateFront.js'))",
      "    throw Object.assign(new Error(`Cannot find module ${specifier}`), { code: 'ERR_MODULE_NOT_FOUND' });",
      '  return next(specifier, context);',
      '}',
    ].join('\n');
    await writeFile(
      hook,
      `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(resolver)}`)});\n`,
    );
    const peer = await startV1Server({});
    const files = await writeGatewayFiles([pinFor('web', peer.url, defaultTools())], { aggregate: {} });
    const child = spawn(
      process.execPath,
      ['--import', pathToFileURL(hook).href, MAIN, 'serve', '--config', files.file],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer): void => {
          out += chunk.toString('utf8');
          const started = /"event":"gateway\.started","url":"([^"]+)"/.exec(out);
          if (started?.[1] !== undefined) resolve(started[1]);
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.once('exit', (code) => reject(new Error(`toolpin serve exited ${code}: ${out}`)));
      });
      const mark = out.length;
      const replies = [];
      for (const version of ['2025-06-18', '2026-07-28']) {
        const reply = await fetch(`${url}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': version,
            'mcp-method': 'tools/list',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        replies.push({
          status: reply.status,
          type: reply.headers.get('content-type'),
          body: await reply.text(),
        });
      }
      // Stopped, so that every line it logged was written (pino writes after the answer).
      child.kill('SIGTERM');
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      return { replies, logged: out.slice(mark), code };
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
      await peer.close();
      await files.remove();
    }
  }

  it('attack: the module cannot be loaded: each request gets a JSON-RPC error naming no file, the gateway logs why, and stops cleanly', async () => {
    const { replies, logged, code } = await serveWithoutAggregateModule();
    for (const reply of replies) {
      expect(reply.status).toBe(500);
      expect(reply.type).toMatch(/^application\/json/);
      const message = JSON.parse(reply.body) as { id: unknown; error?: { code: number } };
      expect(message).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32603 } });
      // No stack, no path of the gateway's install.
      expect(reply.body).not.toContain('aggregateFront');
      expect(reply.body).not.toContain(' at ');
    }
    const lines = logged
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => line.event === 'aggregate.unavailable')).toHaveLength(2);
    // SIGTERM stops it as any gateway (the route never loaded has nothing to close).
    expect(lines.filter((line) => line.event === 'gateway.stop_failed')).toEqual([]);
    expect(code).toBe(0);
  });
});
