import { defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { pinFor } from '../support/pinFor.js';
import { parseSseEvents, postRaw } from '../support/rawMcp.js';
import { spawnGateway, writeGatewayFiles, type GatewayProcess } from './gatewayProcess.js';

const PROTOCOL = '2025-06-18';

/** Reads an SSE body chunk by chunk; `until` sees the events so far and stops the read when true. */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  until: (events: unknown[]) => boolean,
): Promise<{ events: unknown[]; ended: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const parse = (): unknown[] => parseSseEvents(text).map((event) => JSON.parse(event.data) as unknown);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { events: parse(), ended: true };
    text += decoder.decode(value, { stream: true });
    if (until(parse())) {
      reader.releaseLock();
      return { events: parse(), ended: false };
    }
  }
}

describe('SIGTERM', () => {
  let upstream: PeerHandle;
  let files: Awaited<ReturnType<typeof writeGatewayFiles>>;
  let gateway: GatewayProcess;
  let release: () => void = () => undefined;

  beforeEach(async () => {
    upstream = await startV1Server({ mode: 'stateful-sse' });
    files = await writeGatewayFiles([pinFor('demo', upstream.url, defaultTools())], {
      shutdown: { graceMs: 10_000 },
    });
    gateway = await spawnGateway(files.file);
  }, 20_000);

  afterEach(async () => {
    release();
    await gateway.kill();
    await upstream.close();
    await files.remove();
  });

  it('lets an in-flight call finish, ends the open GET stream cleanly, refuses new work, and exits 0', async () => {
    const endpoint = `${gateway.url}/demo/mcp`;
    const init = await postRaw(endpoint, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL,
        capabilities: {},
        clientInfo: { name: 'shutdown-test', version: '1' },
      },
    });
    const session = init.headers.get('mcp-session-id') ?? '';
    expect(session).not.toBe('');
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL };
    expect(
      (await postRaw(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status,
    ).toBe(202);

    // The standalone GET stream (server-to-client notifications).
    const stream = await fetch(endpoint, { headers: { accept: 'text/event-stream', ...headers } });
    expect(stream.status).toBe(200);

    // A slow call: 8 steps, one progress notification per step, answered over SSE. The upstream
    // holds it after its first step until the drain has been observed: in flight, with no timed wait.
    release = upstream.holdSlowCalls();
    const call = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'slow', arguments: { steps: 8, delayMs: 10 }, _meta: { progressToken: 'p' } },
      }),
    });
    expect(call.headers.get('content-type')).toContain('text/event-stream');
    const body = call.body;
    if (body === null) throw new Error('no body');
    // The first progress event proves the call is in flight upstream before the signal.
    const first = await readEvents(body, (events) => events.length > 0);
    expect(first.events[0]).toMatchObject({ method: 'notifications/progress' });

    gateway.signal('SIGTERM');
    const draining = await gateway.waitForEvent('gateway.draining');
    expect(draining).toMatchObject({ streamsEnded: 1 });

    // Load balancers see the replica go unready while it drains; new connections are refused.
    const ready = await fetch(`${gateway.adminUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, state: 'draining' });
    // A new connection is refused; a request on a connection kept alive from before gets 503 and `Connection: close`.
    const late = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    }).then(
      async (response) => ({ status: response.status, body: (await response.json()) as unknown }),
      () => 'refused',
    );
    if (late !== 'refused')
      expect(late).toEqual({ status: 503, body: expect.objectContaining({ error: 'shutting_down' }) });

    // The GET stream ends: the end of the body, not an error.
    const getStream = stream.body;
    if (getStream === null) throw new Error('no body');
    const ended = await readEvents(getStream, () => false);
    expect(ended.ended).toBe(true);
    // All of that while the call was held upstream: from here it finishes its steps.
    release();

    // The call completes with its result, every progress event before it.
    const rest = await readEvents(body, () => false);
    const messages = [...first.events, ...rest.events] as {
      id?: number;
      method?: string;
      result?: unknown;
    }[];
    expect(messages.filter((m) => m.method === 'notifications/progress')).toHaveLength(8);
    expect(messages.at(-1)).toMatchObject({
      id: 7,
      result: { content: [{ type: 'text', text: 'done after 8 steps' }] },
    });
    expect(upstream.callCount('slow')).toBe(1);

    expect(await gateway.exited).toBe(0);
    expect(gateway.events('gateway.drain_timeout')).toEqual([]);
  }, 30_000);
});
