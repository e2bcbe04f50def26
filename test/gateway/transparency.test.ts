import { defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { openHttpStream, type HttpStream } from '../support/httpStream.js';
import { pinFor } from '../support/pinFor.js';
import {
  callRequest,
  initializeRequest,
  openRawSession,
  parseSseEvents,
  postRaw,
} from '../support/rawMcp.js';
import {
  answerHandshake,
  answerJson,
  messageOf,
  startRawUpstream,
  type RawUpstream,
} from '../support/rawUpstream.js';

const CHALLENGE =
  'Bearer error="invalid_token", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"';
const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };

/** Opens a GET stream, retrying while the upstream still holds the previous one (409), bounded. */
async function openGetStream(url: string, headers: Record<string, string>): Promise<HttpStream> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const stream = await openHttpStream(url, { headers: { accept: 'text/event-stream', ...headers } });
    if (stream.status !== 409) return stream;
    stream.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the upstream kept refusing a second GET stream');
}

function listChangedCount(text: string): number {
  return parseSseEvents(text).filter((event) => event.data.includes('notifications/tools/list_changed'))
    .length;
}

describe('gateway transparency for HTTP semantics', () => {
  let raw: RawUpstream;
  let peer: PeerHandle;
  let gateway: GatewayHarness;

  beforeAll(async () => {
    raw = await startRawUpstream((exchange) => {
      if (exchange.req.headers.authorization === 'Bearer expired') {
        answerJson(exchange.res, { error: 'invalid_token' }, 401, { 'www-authenticate': CHALLENGE });
        return;
      }
      if (exchange.req.method === 'GET') {
        exchange.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        exchange.res.end(
          `: keep-alive\n\nretry: 1500\n\nid: 7\nevent: message\ndata: ${JSON.stringify(LIST_CHANGED)}\n\n:\n\n`,
        );
        return;
      }
      if (answerHandshake(exchange)) return;
      const message = messageOf(exchange.body);
      if (message.method === 'tools/list')
        answerJson(exchange.res, {
          jsonrpc: '2.0',
          id: message.id ?? null,
          result: { tools: defaultTools() },
        });
      else
        answerJson(exchange.res, {
          jsonrpc: '2.0',
          id: message.id ?? null,
          result: { content: [{ type: 'text', text: 'ok' }] },
        });
    });
    peer = await startV1Server({ mode: 'stateful-sse' });
    gateway = await startGatewayHarness([
      pinFor('raw', raw.url, defaultTools()),
      pinFor('peer', peer.url, defaultTools()),
    ]);
  });

  afterAll(async () => {
    await gateway.close();
    await peer.close();
    await raw.close();
  });

  it('forwards credentials and custom headers, rewrites Host, and drops hop-by-hop headers', async () => {
    const before = raw.requests.length;
    const stream = await openHttpStream(`${gateway.url}/raw/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer good-token',
        'x-custom': 'kept',
        te: 'trailers',
        connection: 'x-foo',
        'x-foo': 'per-hop',
        'keep-alive': 'timeout=5',
        'accept-encoding': 'gzip, br',
      },
      // A call never listed: the gateway's own fetch-on-miss request is checked too.
      body: JSON.stringify(callRequest(1, 'echo', { text: 'x' })),
    });
    await stream.ended;
    expect(stream.status).toBe(200);
    const received = raw.requests.slice(before);
    expect(received.map((request) => messageOf(request.body).method)).toEqual(['tools/list', 'tools/call']);
    const upstreamHost = new URL(raw.url).host;
    // The proxied call must come back uncompressed (the gateway's own listing decodes what fetch negotiates).
    expect(received[1]?.headers['accept-encoding']).toBe('identity');
    for (const { headers } of received) {
      expect(headers.authorization).toBe('Bearer good-token');
      expect(headers['x-custom']).toBe('kept');
      expect(headers.host).toBe(upstreamHost);
      expect(headers.te).toBeUndefined();
      expect(headers['x-foo']).toBeUndefined();
      expect(headers['keep-alive']).toBeUndefined();
      expect(headers.connection ?? '').not.toContain('x-foo');
    }
  });

  it('relays an upstream 401 with its WWW-Authenticate challenge', async () => {
    const reply = await postRaw(`${gateway.url}/raw/mcp`, initializeRequest(), {
      authorization: 'Bearer expired',
    });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(CHALLENGE);
  });

  it('relays the 401 challenge when the gateway lists on the client’s behalf (fetch on miss)', async () => {
    const reply = await postRaw(`${gateway.url}/raw/mcp`, callRequest(2, 'echo', { text: 'x' }), {
      authorization: 'Bearer expired',
    });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(CHALLENGE);
    expect(
      raw.requests.filter(
        (request) =>
          messageOf(request.body).method === 'tools/call' &&
          request.headers.authorization === 'Bearer expired',
      ),
    ).toEqual([]);
  });

  it('passes comments, keep-alives, retry and event ids of a stream', async () => {
    const stream = await openHttpStream(`${gateway.url}/raw/mcp`, {
      headers: { accept: 'text/event-stream' },
    });
    const text = await stream.ended.then(() => stream.text());
    expect(stream.headers['content-type']).toContain('text/event-stream');
    expect(text).toContain(': keep-alive\n\n');
    expect(text).toContain('retry: 1500\n\n');
    expect(text).toContain(':\n\n');
    expect(parseSseEvents(text)).toEqual([{ id: '7', event: 'message', data: JSON.stringify(LIST_CHANGED) }]);
  });

  it('marks SSE answers unbuffered and uncompressed', async () => {
    const session = await openRawSession(`${gateway.url}/peer/mcp`);
    const reply = await postRaw(
      `${gateway.url}/peer/mcp`,
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { ...session, 'accept-encoding': 'gzip, br' },
    );
    expect(reply.headers.get('content-type')).toContain('text/event-stream');
    expect(reply.headers.get('x-accel-buffering')).toBe('no');
    expect(reply.headers.get('content-encoding')).toBeNull();
    expect(reply.messages).toHaveLength(1);
  });

  it('keeps a GET stream open and delivers server notifications on it', async () => {
    const endpoint = `${gateway.url}/peer/mcp`;
    const session = await openRawSession(endpoint);
    const stream = await openGetStream(endpoint, session);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['x-accel-buffering']).toBe('no');
      peer.driftTool('echo', { description: 'Echo (changed).' });
      await stream.waitFor((received) => listChangedCount(received) >= 1, 'list_changed on the GET stream');
    } finally {
      stream.close();
    }
  });

  it('resumes a cut response stream: Last-Event-ID reaches the upstream and the missed events arrive', async () => {
    const endpoint = `${gateway.url}/peer/mcp`;
    // 2025-11-25 sessions get a priming event (an id with empty data) on every SSE response.
    const session = await openRawSession(endpoint, {}, '2025-11-25');
    const call = {
      jsonrpc: '2.0',
      id: 'slow-1',
      method: 'tools/call',
      params: { name: 'slow', arguments: { steps: 3, delayMs: 150 }, _meta: { progressToken: 'p' } },
    };
    const first = await openHttpStream(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...session,
      },
      body: JSON.stringify(call),
    });
    let lastEventId: string | undefined;
    try {
      const text = await first.waitFor(
        (received) => received.includes('notifications/progress'),
        'the first progress event',
      );
      const events = parseSseEvents(text);
      expect(events.length).toBeGreaterThanOrEqual(2);
      expect(events[0]?.id).toEqual(expect.any(String));
      lastEventId = events.at(-1)?.id;
    } finally {
      first.close();
    }
    await first.ended;
    const resumed = await openGetStream(endpoint, { ...session, 'last-event-id': lastEventId ?? '' });
    try {
      expect(resumed.status).toBe(200);
      const text = await resumed.waitFor(
        (received) => received.includes('"id":"slow-1"'),
        'the replayed result',
      );
      const messages = parseSseEvents(text)
        .filter((event) => event.data !== '')
        .map(
          (event) =>
            JSON.parse(event.data) as { id?: unknown; params?: { progress?: number }; result?: unknown },
        );
      expect(messages.at(-1)).toEqual({
        jsonrpc: '2.0',
        id: 'slow-1',
        result: { content: [{ type: 'text', text: 'done after 3 steps' }] },
      });
      expect(
        messages
          .filter((message) => message.params?.progress !== undefined)
          .map((message) => message.params?.progress),
      ).toEqual([2, 3]);
      const gets = peer.requests.filter((request) => request.httpMethod === 'GET');
      expect(gets.at(-1)?.headers['last-event-id']).toBe(lastEventId);
    } finally {
      resumed.close();
    }
  });
});
