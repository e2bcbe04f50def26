import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { openHttpStream } from '../support/httpStream.js';
import { callRequest, openRawSession, parseSseEvents, postRaw } from '../support/rawMcp.js';
import { catalogAtStart, eventually, stdioPinFor } from './support.js';

const GATED_SERVER = fileURLToPath(new URL('../fixtures/gatedStdioServer.mjs', import.meta.url));
const GATED_COMMAND: [string, string] = [process.execPath, GATED_SERVER];

/** An SDK v1 client over Streamable HTTP that records every message its transport delivers. */
interface RecordingClient {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  readonly seen: JSONRPCMessage[];
  /** HTTP statuses of the GET requests the transport made. */
  readonly gets: number[];
  /** HTTP statuses of the GET requests that resumed a stream (with Last-Event-ID). */
  readonly resumes: number[];
}

/**
 * Connects a recording client to `endpoint`; with `sessionId` it joins that session (no initialize).
 * `reconnectionDelayMs` replaces the SDK's first delay (1 s) before it resumes a stream that ended.
 */
async function connectRecording(
  endpoint: string,
  sessionId?: string,
  reconnectionDelayMs?: number,
): Promise<RecordingClient> {
  const gets: number[] = [];
  const resumes: number[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
    ...(sessionId === undefined ? {} : { sessionId }),
    ...(reconnectionDelayMs === undefined
      ? {}
      : {
          reconnectionOptions: {
            initialReconnectionDelay: reconnectionDelayMs,
            maxReconnectionDelay: 30_000,
            reconnectionDelayGrowFactor: 1.5,
            maxRetries: 2,
          },
        }),
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (init?.method === 'GET') gets.push(response.status);
      if (init?.method === 'GET' && new Headers(init.headers).has('last-event-id'))
        resumes.push(response.status);
      return response;
    },
  });
  const client = new Client({ name: 'toolpin-resume-test', version: '1.0.0' });
  await client.connect(transport);
  const seen: JSONRPCMessage[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    seen.push(message);
    deliver?.(message);
  };
  return { client, transport, seen, gets, resumes };
}

/** The progress values among recorded messages, in arrival order. */
function progressOf(messages: readonly unknown[]): number[] {
  return messages
    .filter((message) => (message as { method?: string }).method === 'notifications/progress')
    .map((message) => (message as { params: { progress: number } }).params.progress);
}

/** The tool results among recorded messages. */
function resultsOf(messages: readonly unknown[]): unknown[] {
  return messages
    .map((message) => (message as { result?: { content?: unknown } }).result?.content)
    .filter((content) => content !== undefined);
}

/** Serves the gated stdio fixture behind the gateway; `env` goes to each spawned child. */
async function startGated(env: Record<string, string>): Promise<GatewayHarness> {
  const tools = await catalogAtStart(GATED_COMMAND);
  return startGatewayHarness([stdioPinFor('gated', GATED_COMMAND, tools, env)]);
}

describe('bridged endpoint: a cut stream resumes with Last-Event-ID (stdio upstream)', () => {
  let dir: string;
  let gate: string;
  let done: string;
  let gateway: GatewayHarness;
  let endpoint: string;
  const clients: RecordingClient[] = [];

  async function connect(sessionId?: string): Promise<RecordingClient> {
    const recording = await connectRecording(endpoint, sessionId);
    clients.push(recording);
    return recording;
  }

  /**
   * Starts `gated` (4 steps) on a first client, waits for progress 1, then cuts that client's
   * connection. Returns the session id, the resumption tokens seen and the first client's messages.
   */
  async function startAndCut(): Promise<{ sessionId: string; tokens: string[]; first: RecordingClient }> {
    const first = await connect();
    const sessionId = first.transport.sessionId;
    if (sessionId === undefined) throw new Error('the gateway gave no session id');
    const tokens: string[] = [];
    let progressed: () => void = () => undefined;
    const firstProgress = new Promise<void>((resolve) => (progressed = resolve));
    const call = first.client.request(
      { method: 'tools/call', params: { name: 'gated', arguments: { steps: 4 } } },
      CallToolResultSchema,
      { onprogress: () => progressed(), onresumptiontoken: (token) => tokens.push(token) },
    );
    const outcome = call.then(
      () => 'answered',
      () => 'cut',
    );
    await firstProgress;
    await first.transport.close();
    expect(await outcome).toBe('cut');
    return { sessionId, tokens, first };
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-resume-'));
    gate = join(dir, 'gate');
    done = join(dir, 'done');
    gateway = await startGated({ TOOLPIN_FIXTURE_GATE: gate, TOOLPIN_FIXTURE_DONE: done });
    endpoint = `${gateway.url}/gated/mcp`;
  });

  afterEach(async () => {
    for (const { client } of clients.splice(0)) await client.close();
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('replays the progress and the answer stored while the client was away, each once', async () => {
    const { sessionId, tokens, first } = await startAndCut();
    expect(progressOf(first.seen)).toEqual([1]);
    const second = await connect(sessionId);
    await writeFile(gate, '');
    expect(await eventually(async () => (await readFile(done, 'utf8').catch(() => '')) !== '')).toBe(true);
    // The child answered gated before this echo, and the bridge hands answers on in order: once
    // the echo is answered, gated's answer is in the session's store.
    await second.client.callTool({ name: 'echo', arguments: { text: 'after' } });
    const resumed = await second.client.request(
      { method: 'tools/call', params: { name: 'gated', arguments: { steps: 4 } } },
      CallToolResultSchema,
      { resumptionToken: tokens.at(-1) },
    );
    expect(resumed.content).toEqual([{ type: 'text', text: 'done after 4 steps' }]);
    expect(second.gets).toEqual([200]);
    expect(progressOf(second.seen)).toEqual([2, 3, 4]);
    expect(resultsOf(second.seen)).toEqual([
      [{ type: 'text', text: 'after' }],
      [{ type: 'text', text: 'done after 4 steps' }],
    ]);
  });

  it('resumes a call still running: the replayed stream carries the rest as it comes', async () => {
    const { sessionId, tokens, first } = await startAndCut();
    const second = await connect(sessionId);
    // A round trip on a new connection: the gateway has seen the first connection go by then.
    await second.client.ping();
    const resumed = second.client.request(
      { method: 'tools/call', params: { name: 'gated', arguments: { steps: 4 } } },
      CallToolResultSchema,
      { resumptionToken: tokens.at(-1) },
    );
    // A failure below is reported as itself, not as this request's rejection when the client closes.
    resumed.catch(() => undefined);
    // The gateway answers the resume's GET only once the replayed stream is registered.
    expect(await eventually(() => second.gets.includes(200))).toBe(true);
    await writeFile(gate, '');
    expect((await resumed).content).toEqual([{ type: 'text', text: 'done after 4 steps' }]);
    expect([...progressOf(first.seen), ...progressOf(second.seen)]).toEqual([1, 2, 3, 4]);
    expect(resultsOf(second.seen)).toEqual([[{ type: 'text', text: 'done after 4 steps' }]]);
  });

  it('resumes a 2025-03-26 stream (no priming event) from the id of a progress event', async () => {
    const session = await openRawSession(endpoint, {}, '2025-03-26');
    const call = {
      ...callRequest('slow-1', 'gated', { steps: 3 }),
      params: { name: 'gated', arguments: { steps: 3 }, _meta: { progressToken: 'p-1' } },
    };
    const stream = await openHttpStream(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...session,
      },
      body: JSON.stringify(call),
    });
    const before = await stream.waitFor((text) => text.includes('"progress":1'), 'progress 1');
    stream.close();
    const cursor = parseSseEvents(before).at(-1)?.id;
    expect(cursor).toEqual(expect.any(String));
    await writeFile(gate, '');
    expect(await eventually(async () => (await readFile(done, 'utf8').catch(() => '')) !== '')).toBe(true);
    expect((await postRaw(endpoint, callRequest('echo-1', 'echo', { text: 'x' }), session)).status).toBe(200);
    const resumed = await openHttpStream(endpoint, {
      headers: { accept: 'text/event-stream', ...session, 'last-event-id': cursor ?? '' },
    });
    expect(resumed.status).toBe(200);
    const text = await resumed.waitFor((received) => received.includes('done after'), 'the answer');
    resumed.close();
    const messages = parseSseEvents(text).map((event) => JSON.parse(event.data) as unknown);
    expect(progressOf(messages)).toEqual([2, 3]);
    expect(messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 'slow-1',
      result: { content: [{ type: 'text', text: 'done after 3 steps' }] },
    });
  });

  it('refuses a cursor this session never issued, and every resume once the session ended', async () => {
    const { sessionId, tokens } = await startAndCut();
    const headers = { accept: 'text/event-stream', 'mcp-session-id': sessionId };
    const forged = await fetch(endpoint, { headers: { ...headers, 'last-event-id': 'nope/999999' } });
    expect(forged.status).toBe(400);
    await forged.body?.cancel();
    const ended = await fetch(endpoint, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
    expect(ended.status).toBe(200);
    const late = await fetch(endpoint, { headers: { ...headers, 'last-event-id': tokens.at(-1) ?? '' } });
    expect(late.status).toBe(404);
    await late.body?.cancel();
  });
});

describe('bridged endpoint: resuming refusals and batches', () => {
  let dir: string;
  let listGate: string;
  let gate: string;
  let done: string;
  let gateway: GatewayHarness;
  let endpoint: string;
  const clients: RecordingClient[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-resume-block-'));
    listGate = join(dir, 'list-gate');
    gate = join(dir, 'gate');
    done = join(dir, 'done');
    // The child serves a drifted echo, and its listing (the gateway's fetch on miss) waits for the list gate.
    gateway = await startGated({
      TOOLPIN_FIXTURE_DRIFT: '1',
      TOOLPIN_FIXTURE_LIST_GATE: listGate,
      TOOLPIN_FIXTURE_GATE: gate,
      TOOLPIN_FIXTURE_DONE: done,
    });
    endpoint = `${gateway.url}/gated/mcp`;
  });

  afterEach(async () => {
    for (const { client } of clients.splice(0)) await client.close();
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses to resume a stream from the refusal that ended it, so no resumed stream stays open', async () => {
    await writeFile(listGate, '');
    // The SDK's other reconnection options as they are; only its wait before resuming is shorter.
    const recording = await connectRecording(endpoint, undefined, 20);
    clients.push(recording);
    await expect(recording.client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toMatchObject(
      {
        code: -32040,
      },
    );
    // The SDK v1 client takes an error answer for no answer and resumes the ended stream (after
    // 20 ms here, 1 s by default): a replay of nothing would stay open until the client leaves.
    expect(await eventually(() => recording.resumes.length > 0)).toBe(true);
    expect(recording.resumes.every((status) => status === 400)).toBe(true);
  });

  it('delivers the -32040 of a call blocked after the cut on the resumed stream', async () => {
    const client = new Client({ name: 'toolpin-resume-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(endpoint));
    await client.connect(transport);
    const sessionId = transport.sessionId ?? '';
    const tokens: string[] = [];
    const call = client
      .request(
        { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
        CallToolResultSchema,
        { onresumptiontoken: (token) => tokens.push(token) },
      )
      .then(
        () => 'answered',
        () => 'cut',
      );
    // A 2025-11-25 stream opens with a priming event: resumable before any message.
    expect(await eventually(() => tokens.length > 0)).toBe(true);
    await transport.close();
    expect(await call).toBe('cut');
    await writeFile(listGate, '');
    const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    // Client messages are handled in order: once this ping is answered the refusal was stored.
    const ping = await postRaw(endpoint, { jsonrpc: '2.0', id: 'ping-1', method: 'ping' }, session);
    expect(ping.status).toBe(200);
    const resumed = await openHttpStream(endpoint, {
      headers: { accept: 'text/event-stream', ...session, 'last-event-id': tokens.at(-1) ?? '' },
    });
    expect(resumed.status).toBe(200);
    const text = await resumed.waitFor((received) => received.includes('-32040'), 'the refusal');
    resumed.close();
    const refusals = parseSseEvents(text).map((event) => JSON.parse(event.data) as { id: unknown });
    // The SDK v1 client sent initialize as id 0 and the call as id 1.
    expect(refusals).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        error: expect.objectContaining({
          code: -32040,
          data: expect.objectContaining({ reason: 'tool_drifted', server: 'gated', tool: 'echo' }),
        }),
      },
    ]);
    expect(gateway.events('call.blocked')).toHaveLength(1);
    await fetch(endpoint, { method: 'DELETE', headers: session });
  });

  it("resumes a 2025-03-26 batch's stream: the rest of the allowed call, the refusal not again", async () => {
    await writeFile(listGate, '');
    const session = await openRawSession(endpoint, {}, '2025-03-26');
    const batch = [
      {
        ...callRequest('slow-1', 'gated', { steps: 3 }),
        params: { name: 'gated', arguments: { steps: 3 }, _meta: { progressToken: 'p-1' } },
      },
      callRequest('echo-1', 'echo', { text: 'x' }),
    ];
    const stream = await openHttpStream(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...session,
      },
      body: JSON.stringify(batch),
    });
    const before = await stream.waitFor(
      (text) => text.includes('-32040') && text.includes('"progress":1'),
      'the refusal and progress 1',
    );
    stream.close();
    const cursor = parseSseEvents(before).at(-1)?.id ?? '';
    await writeFile(gate, '');
    expect(await eventually(async () => (await readFile(done, 'utf8').catch(() => '')) !== '')).toBe(true);
    // The child answers this ping after gated: once it is answered, gated's answer is stored.
    expect((await postRaw(endpoint, { jsonrpc: '2.0', id: 'ping-1', method: 'ping' }, session)).status).toBe(
      200,
    );
    const resumed = await openHttpStream(endpoint, {
      headers: { accept: 'text/event-stream', ...session, 'last-event-id': cursor },
    });
    expect(resumed.status).toBe(200);
    const text = await resumed.waitFor((received) => received.includes('done after'), 'the answer');
    resumed.close();
    const messages = parseSseEvents(text).map((event) => JSON.parse(event.data) as unknown);
    expect(progressOf(messages)).toEqual([2, 3]);
    expect(messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 'slow-1',
      result: { content: [{ type: 'text', text: 'done after 3 steps' }] },
    });
    expect(text).not.toContain('-32040');
  });
});
