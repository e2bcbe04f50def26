import { readFileSync } from 'node:fs';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError } from '../../src/errors.js';
import { liveChildCount } from '../../src/transports/childRegistry.js';
import { StdioChildTransport } from '../../src/transports/stdioChildTransport.js';

/** A child running this script with node, with the PATH it needs and nothing else. */
function nodeChild(
  script: string,
  extra: { graceMs?: number; onStderrLine?: (line: string) => void } = {},
): StdioChildTransport {
  return new StdioChildTransport({
    command: process.execPath,
    args: ['-e', script],
    env: { PATH: process.env.PATH ?? '' },
    ...extra,
  });
}

/** Echoes every stdin line back as a JSON-RPC result with the same id; says hello on stderr. */
const ECHO_SERVER = `
process.stderr.write('hello from the child\\npartial line');
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === '') return;
  const message = JSON.parse(line);
  process.stdout.write('not json: a server logging to stdout\\n');
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { seen: message.method } }) + '\\n');
});`;

/** True while `pid` runs: a zombie (exited, not yet reaped by whoever adopted it) has stopped. */
function processRuns(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

function nextMessage(transport: StdioChildTransport): Promise<JSONRPCMessage> {
  return new Promise((resolve) => (transport.onmessage = resolve));
}

describe('StdioChildTransport', () => {
  it('exchanges JSON-RPC lines, skips stdout lines that are not JSON-RPC, and hands over stderr lines', async () => {
    const stderr: string[] = [];
    const errors: Error[] = [];
    const transport = nodeChild(ECHO_SERVER, { onStderrLine: (line) => stderr.push(line) });
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    expect(typeof transport.pid).toBe('number');
    const answer = nextMessage(transport);
    await transport.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
    expect(await answer).toEqual({ jsonrpc: '2.0', id: 7, result: { seen: 'ping' } });
    expect(errors.length).toBeGreaterThanOrEqual(1);
    await transport.close();
    expect(stderr).toEqual(['hello from the child', 'partial line']);
    expect(transport.exit).toEqual({ code: 0, signal: null });
    expect(liveChildCount()).toBe(0);
  });

  it('hands over every JSON value unvalidated, a line split across chunks whole, for the consumer to check', async () => {
    // The second message is written in three pieces with pauses, so it arrives in several chunks.
    const script = `
const out = (text) => new Promise((resolve) => process.stdout.write(text, resolve));
(async () => {
  await out('{"jsonrpc":"2.0","id":1,"result":{},"error":null}\\n');
  await out('{"jsonrpc":"2.0",');
  await new Promise((resolve) => setTimeout(resolve, 20));
  await out('"id":2,"result":{"text":"\u00e9');
  await new Promise((resolve) => setTimeout(resolve, 20));
  await out('"}}\\r\\n');
})();
process.stdin.resume();`;
    const transport = nodeChild(script);
    const seen: unknown[] = [];
    const both = new Promise<void>((resolve) => {
      transport.onmessage = (message) => {
        seen.push(message);
        if (seen.length === 2) resolve();
      };
    });
    await transport.start();
    await both;
    await transport.close();
    expect(seen).toEqual([
      { jsonrpc: '2.0', id: 1, result: {}, error: null },
      { jsonrpc: '2.0', id: 2, result: { text: '\u00e9' } },
    ]);
  });

  it('fails the session, not the process, when a message handler throws: GW_SESSION_FAILED and the child stopped', async () => {
    const transport = nodeChild(
      `process.stdout.write('{"jsonrpc":"2.0","method":"notifications/x"}\\n'); process.stdin.resume();`,
    );
    const errors: Error[] = [];
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    transport.onerror = (error) => errors.push(error);
    transport.onmessage = () => {
      throw new RangeError('Maximum call stack size exceeded');
    };
    await transport.start();
    await closed;
    expect(errors).toEqual([expect.objectContaining({ code: 'GW_SESSION_FAILED' })]);
    expect(transport.exit).toEqual({ code: 0, signal: null });
  });

  it('stops a child whose line outgrows maxMessageBytes', async () => {
    const transport = new StdioChildTransport({
      command: process.execPath,
      args: ['-e', `process.stdout.write('x'.repeat(5000)); process.stdin.resume();`],
      env: { PATH: process.env.PATH ?? '' },
      maxMessageBytes: 1000,
    });
    const errors: Error[] = [];
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    await closed;
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'GW_UPSTREAM_INVALID',
        message: expect.stringContaining('1000 bytes'),
      }),
    ]);
  });

  it('reports how a child that exits on its own ended, and calls onclose', async () => {
    const transport = nodeChild('process.exit(3)');
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await transport.start();
    await closed;
    expect(transport.exit).toEqual({ code: 3, signal: null });
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toMatchObject({
      code: 'GW_UPSTREAM_EXITED',
    });
  });

  it('rejects start with GW_UPSTREAM_SPAWN_FAILED when the program does not exist', async () => {
    const transport = new StdioChildTransport({
      command: '/nonexistent/toolpin-test-server',
      args: [],
      env: {},
    });
    const error = await transport.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('GW_UPSTREAM_SPAWN_FAILED');
    await transport.close();
  });

  it('escalates to SIGTERM for a child that ignores the end of its stdin', async () => {
    // The grace is also how long SIGTERM gets before SIGKILL: long enough for a loaded machine to reap.
    const transport = nodeChild('process.stdin.resume(); setInterval(() => {}, 1000);', { graceMs: 600 });
    await transport.start();
    await transport.close();
    expect(transport.exit).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('escalates to SIGKILL for a child that ignores SIGTERM too', async () => {
    let ready: () => void = () => undefined;
    const handlerInstalled = new Promise<void>((resolve) => (ready = resolve));
    const transport = nodeChild(
      "process.on('SIGTERM', () => {}); process.stdin.resume(); setInterval(() => {}, 1000); process.stderr.write('ready\\n');",
      {
        graceMs: 100,
        onStderrLine: (line) => line === 'ready' && ready(),
      },
    );
    await transport.start();
    await handlerInstalled;
    await transport.close();
    expect(transport.exit).toEqual({ code: null, signal: 'SIGKILL' });
  });
  it('resolves close only once every process of its group is gone, a grandchild too', async () => {
    // The child exits when its stdin closes; the grandchild ignores SIGTERM and outlives it: only
    // the group SIGKILL sent when the child exits ends it, some time after.
    const script = `
const { spawn } = require('node:child_process');
const grandchild = spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'], { stdio: 'ignore' });
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'pid', params: { pid: grandchild.pid } }) + '\\n');
grandchild.unref();
process.stdin.on('end', () => process.exit(0)).resume();`;
    const transport = nodeChild(script);
    const announced = nextMessage(transport);
    await transport.start();
    const message = await announced;
    const pid = 'method' in message && message.method === 'pid' ? message.params?.pid : undefined;
    if (typeof pid !== 'number')
      throw new Error(`expected the grandchild's pid, got ${JSON.stringify(message)}`);
    expect(processRuns(pid)).toBe(true);
    await transport.close();
    expect(processRuns(pid)).toBe(false);
  }, 15_000);
});
