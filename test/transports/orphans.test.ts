import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connectSseClient, connectV1Client } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import {
  countAlive,
  eventually,
  rawFixtureCommand,
  RAW_CRASH,
  RAW_ECHO,
  runWrapInProcess,
  stdioPinFor,
  TOOLPIN_CLI,
  writePin,
  writtenPids,
} from './support.js';

// Every fixture server (the raw stdio fixture, listing echo and crash) spawns a long-lived
// grandchild, as `npx` launches its server: a gateway that only killed its own child would leave
// that one behind. Each fixture writes its pid, and the grandchild's, into `dir`; the tests count
// how many still run.

/** What the fixture lists in its `crash` mode: what is pinned. */
const TOOLS = [RAW_ECHO, RAW_CRASH];

let dir: string;
let env: Record<string, string>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolpin-orphans-'));
  env = { TOOLPIN_RAW_PID_DIR: dir, TOOLPIN_RAW_GRANDCHILD: '1', TOOLPIN_RAW_MODE: 'crash' };
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Waits until the fixture and its grandchild wrote their pids (`count` per session). */
async function spawnedPids(count: number): Promise<number[]> {
  expect(await eventually(async () => (await writtenPids(dir)).length >= count)).toBe(true);
  return writtenPids(dir);
}

/** True once none of the pids runs (bounded wait). */
async function allGone(pids: readonly number[]): Promise<boolean> {
  return eventually(async () => (await countAlive(pids)) === 0);
}

describe('serve: no process outlives its session', () => {
  let gateway: GatewayHarness;
  const clients: Client[] = [];

  async function connect(route: 'mcp' | 'sse' = 'mcp'): Promise<Client> {
    const client =
      route === 'mcp'
        ? await connectV1Client(`${gateway.url}/local/mcp`)
        : await connectSseClient(`${gateway.url}/local/sse`);
    clients.push(client);
    await client.listTools();
    return client;
  }

  beforeEach(async () => {
    // A one-second idle bound, so that a client vanishing without DELETE is observed too.
    gateway = await startGatewayHarness([stdioPinFor('local', rawFixtureCommand(), TOOLS, env)], {
      sessions: { ttlSeconds: 1 },
    });
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await gateway.close();
  });

  it('stops the child and its grandchild when the client ends the session (DELETE)', async () => {
    const client = await connect();
    const pids = await spawnedPids(2);
    expect(await countAlive(pids)).toBe(2);
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    expect(await allGone(pids)).toBe(true);
  });

  it('stops the child of a client that vanished without ending its session, once it is idle', async () => {
    const client = await connect();
    const pids = await spawnedPids(2);
    await client.close();
    expect(await allGone(pids)).toBe(true);
    expect(gateway.events('session.ended').length).toBeGreaterThanOrEqual(1);
  });

  it('stops the child when a legacy SSE client closes its stream', async () => {
    const client = await connect('sse');
    const pids = await spawnedPids(2);
    await client.close();
    expect(await allGone(pids)).toBe(true);
  });

  it('stops the grandchild too when the child crashes', async () => {
    const client = await connect();
    const pids = await spawnedPids(2);
    await expect(client.callTool({ name: 'crash', arguments: {} })).rejects.toMatchObject({ code: -32041 });
    expect(await allGone(pids)).toBe(true);
  });

  it('stops every child of every open session on gateway shutdown', async () => {
    await connect();
    await connect();
    await connect('sse');
    const pids = await spawnedPids(6);
    expect(await countAlive(pids)).toBe(6);
    await gateway.close();
    // close() resolved after the children were gone, not merely signalled.
    expect(await countAlive(pids)).toBe(0);
  });
});

/** `toolpin wrap` spoken to with raw JSON-RPC lines, to observe its exit. */
interface RawWrap {
  readonly exited: Promise<number | null>;
  request(id: number, method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The client closes wrap's stdin. */
  endInput(): void;
  /** Ends wrap if it still runs (after the test). */
  stop(): Promise<void>;
}

/** Initializes the session on wrap's stdio and returns how to send it a request. */
async function speakRaw(input: Writable, output: Readable): Promise<RawWrap['request']> {
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  createInterface({ input: output }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    if (typeof message.id === 'number') waiting.get(message.id)?.(message);
  });
  const request: RawWrap['request'] = (id, method, params = {}) =>
    new Promise((resolve) => {
      waiting.set(id, resolve);
      input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await request(0, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  });
  input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return request;
}

/** A spawned `toolpin wrap` (for the real signal), the server after `--` with `childEnv` from its launch. */
async function spawnRawWrap(
  pinFile: string,
  childEnv: Record<string, string>,
): Promise<RawWrap & { readonly child: ChildProcessWithoutNullStreams }> {
  const child = spawn(
    process.execPath,
    [TOOLPIN_CLI, 'wrap', '--pin', pinFile, '--', ...rawFixtureCommand()],
    {
      env: { ...process.env, ...childEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  child.stderr.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const request = await speakRaw(child.stdin, child.stdout);
  return { child, exited, request, endInput: () => child.stdin.end(), stop };
}

/**
 * `toolpin wrap` in-process (what it decides, not its process: its exit code is what the binary
 * exits with), running the pin file's stdio upstream, whose environment is in the pin.
 */
async function startRawWrap(pinFile: string): Promise<RawWrap> {
  const program = runWrapInProcess(pinFile, undefined);
  const request = await speakRaw(program.stdin, program.stdout);
  const stop = async (): Promise<void> => {
    await program.end();
  };
  return { exited: program.exited, request, endInput: () => program.stdin.end(), stop };
}

describe('wrap: no process outlives toolpin', () => {
  let pinFile: string;
  let wrap: RawWrap | undefined;

  beforeEach(async () => {
    pinFile = await writePin(dir, stdioPinFor('local', rawFixtureCommand(), TOOLS, env));
  });

  afterEach(async () => {
    await wrap?.stop();
    wrap = undefined;
  });

  it('exits 0 and stops the server and its grandchild when the client closes stdin', async () => {
    wrap = await startRawWrap(pinFile);
    const pids = await spawnedPids(2);
    wrap.endInput();
    expect(await wrap.exited).toBe(0);
    expect(await allGone(pids)).toBe(true);
  });

  it('stops the server and its grandchild on SIGTERM', async () => {
    // The real signal to a spawned toolpin: the process is the point.
    pinFile = await writePin(dir, pinFor('local', 'http://127.0.0.1:9/mcp', TOOLS));
    const spawned = await spawnRawWrap(pinFile, env);
    wrap = spawned;
    const pids = await spawnedPids(2);
    spawned.child.kill('SIGTERM');
    await spawned.exited;
    expect(await allGone(pids)).toBe(true);
  });

  it('answers the pending call with an error and exits 1 when the server crashes', async () => {
    wrap = await startRawWrap(pinFile);
    const pids = await spawnedPids(2);
    await wrap.request(1, 'tools/list');
    const answer = await wrap.request(2, 'tools/call', { name: 'crash', arguments: {} });
    expect(answer.error).toMatchObject({ code: -32041, message: expect.stringMatching(/exited \(code 3\)/) });
    expect(await wrap.exited).toBe(1);
    expect(await allGone(pids)).toBe(true);
  });
});
