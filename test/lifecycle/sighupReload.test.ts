import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectV1Client, defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { pinFor } from '../support/pinFor.js';
import { until } from '../support/until.js';
import { callError } from '../support/rejection.js';

const main = fileURLToPath(new URL('../../packages/gateway/dist/cli/main.js', import.meta.url));

type Line = Record<string, unknown>;

describe('toolpin serve --no-watch: SIGHUP reloads the servers folder', () => {
  let dir: string;
  let upstream: PeerHandle;
  let child: ChildProcessWithoutNullStreams;
  let client: Client | undefined;
  const lines: Line[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-sighup-'));
    upstream = await startV1Server({ mode: 'stateless-json' });
    await mkdir(join(dir, 'servers'));
    await writeFile(
      join(dir, 'servers', 'demo.json'),
      JSON.stringify(pinFor('demo', upstream.url, defaultTools())),
    );
    await writeFile(
      join(dir, 'gateway.json'),
      JSON.stringify({
        listen: { host: '127.0.0.1', port: 0 },
        admin: { host: '127.0.0.1', port: 0 },
        servers: './servers',
      }),
    );
    child = spawn(process.execPath, [main, 'serve', '--config', join(dir, 'gateway.json'), '--no-watch']);
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const complete = buffered.split('\n');
      buffered = complete.pop() ?? '';
      for (const line of complete) if (line.startsWith('{')) lines.push(JSON.parse(line) as Line);
    });
    child.stderr.resume();
  });

  afterEach(async () => {
    await client?.close();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  const events = (event: string): Line[] => lines.filter((line) => line.event === event);

  it('leaves a changed pin alone until SIGHUP, then puts it in force', async () => {
    const started = await until(() => events('gateway.started').at(0), 'the gateway to start');
    client = await connectV1Client(`${String(started.url)}/demo/mcp`);
    const callEcho = (): Promise<McpError | undefined> => callError(client!, 'echo');
    expect(await callEcho()).toBeUndefined();

    // A new pin that no longer approves echo.
    const withoutEcho = defaultTools().filter((tool) => tool.name !== 'echo');
    await writeFile(
      join(dir, 'servers', 'demo.json'),
      JSON.stringify(pinFor('demo', upstream.url, withoutEcho)),
    );
    expect(await callEcho()).toBeUndefined();
    expect(events('pin.reloaded')).toEqual([]);

    child.kill('SIGHUP');
    await until(() => events('pin.reloaded').at(0), 'the reload');
    expect(events('gateway.reloading')).toEqual([expect.objectContaining({ signal: 'SIGHUP' })]);
    expect((await callEcho())?.data).toMatchObject({ reason: 'tool_not_pinned', tool: 'echo' });
    expect(events('gateway.started')).toHaveLength(1);
  }, 60_000);
});
