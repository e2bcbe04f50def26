import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { callRequest, parseReplyBody, statelessEnvelope } from '../support/rawMcp.js';
import { until } from '../support/until.js';
import { rawHead, type UpstreamExchange } from './support/maliciousUpstream.js';
import {
  headerLines,
  headerOf,
  RawConnection,
  rawPost,
  rawRequest,
  type RawResponse,
} from './support/rawClient.js';
import { listRequest, postJson, useSessionRig } from './support/rig.js';

// Red team 13: a sessionless exchange the upstream acknowledged without answering gets -32042
// unanswered (59321e5), and a client that leaves before its answer is whole takes the upstream
// request with it (8dd1200). Attacked for answers given twice, upstream connections dropped after
// complete answers, streams left or held back, 2026-07-28 requests and listening streams.

const IDLE_MS = 400;

/** Every response id in a reply body (JSON or SSE, arrays flattened), duplicates kept. */
function answeredIds(response: RawResponse): unknown[] {
  const values = parseReplyBody(headerOf(response, 'content-type') ?? '', response.body);
  return values
    .flatMap((value) => (Array.isArray(value) ? (value as unknown[]) : [value]))
    .filter((value): value is Record<string, unknown> => typeof value === 'object' && value !== null)
    .filter((message) => 'id' in message && !('method' in message))
    .map((message) => message.id);
}

/** The error reason `id` got in a reply body, or 'result', or undefined when nothing answered it. */
function outcomeOf(response: RawResponse, id: unknown): unknown {
  const values = parseReplyBody(headerOf(response, 'content-type') ?? '', response.body);
  const message = values
    .flatMap((value) => (Array.isArray(value) ? (value as unknown[]) : [value]))
    .find((value) => (value as { id?: unknown }).id === id) as
    { result?: unknown; error?: { code: number; data?: { reason?: unknown } } } | undefined;
  if (message === undefined) return undefined;
  if (message.error === undefined) return 'result';
  return `${message.error.code} ${String(message.error.data?.reason)}`;
}

/** An SSE body (status 200, chunked by node) of these events, then the end. */
function sseEvents(res: ServerResponse, messages: readonly unknown[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(messages.map((message) => `data: ${JSON.stringify(message)}\n\n`).join(''));
}

function echoResult(id: unknown, text: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } };
}

const progress = (token: string, n: number): Record<string, unknown> => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: token, progress: n },
});

/** Sends one POST of `body` on a fresh raw connection; returns the complete response and the bytes. */
async function post(
  endpoint: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ response: RawResponse; received: string }> {
  const connection = await RawConnection.open(endpoint);
  try {
    connection.write(rawPost(endpoint, JSON.stringify(body), headerLines(headers)));
    const response = await connection.response(0, 5000);
    // A second answer written after the first would arrive in this time.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connection.received.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
    return { response, received: connection.received };
  } finally {
    connection.close();
  }
}

/** The headers of a 2026-07-28 request (no session) for `method`, naming `name` when given. */
function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    'Mcp-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
    ...(name === undefined ? {} : { 'Mcp-Name': name }),
  };
}

function modernCall(id: string, text: string): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text }, _meta: statelessEnvelope('redteam13') },
  };
}

describe('redteam13: one answer per request when a sessionless upstream acknowledges without answering', () => {
  const rig = useSessionRig({ gateway: { limits: { upstreamTimeoutMs: 3000, streamIdleMs: IDLE_MS } } });

  beforeAll(async () => {
    await postJson(rig.endpoint, listRequest('known'), rig.session);
    await postJson(rig.endpoint, listRequest('known-sessionless'));
  });
  beforeEach(() => {
    rig.upstream.behaviour = undefined;
  });

  it('a sessionless batch answered in part on SSE: the answered once, the others one -32042 each, notifications nothing', async () => {
    rig.upstream.behaviour = ({ res, request }) => {
      if (!request.messages.some((message) => message.method === 'tools/call')) return false;
      sseEvents(res, [progress('p', 1), echoResult('a', 'echo: a'), echoResult('a', 'again')]);
      return true;
    };
    const { response } = await post(rig.endpoint, [
      callRequest('a', 'echo', { text: 'a' }),
      callRequest('b', 'echo', { text: 'b' }),
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      callRequest('c', 'echo', { text: 'c' }),
    ]);
    expect(answeredIds(response).sort()).toEqual(['a', 'b', 'c']);
    expect([outcomeOf(response, 'a'), outcomeOf(response, 'b'), outcomeOf(response, 'c')]).toEqual([
      'result',
      '-32042 unanswered',
      '-32042 unanswered',
    ]);
  });

  it.each<[string, (res: ServerResponse) => void]>([
    ['a 202', (res) => res.writeHead(202).end()],
    ['an SSE stream that ends', (res) => sseEvents(res, [])],
    [
      'an empty JSON body',
      (res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': 0 }).end(),
    ],
  ])(
    'a sessionless batch with a refused member, acknowledged with %s: each id answered once',
    async (_, ack) => {
      rig.upstream.behaviour = ({ res, request }) => {
        if (!request.messages.some((message) => message.method === 'tools/call')) return false;
        ack(res);
        return true;
      };
      const { response } = await post(rig.endpoint, [
        callRequest('ok', 'echo', { text: 'x' }),
        callRequest('evil', 'evil', {}),
      ]);
      expect(answeredIds(response).sort()).toEqual(['evil', 'ok']);
      expect(outcomeOf(response, 'ok')).toBe('-32042 unanswered');
      expect(outcomeOf(response, 'evil')).toMatch(/^-32040 /);
      // The upstream executed nothing it was not allowed to.
      expect(rig.upstream.executed).not.toContain('evil');
    },
  );

  it.each<[string, (res: ServerResponse) => void, number]>([
    ['a 202', (res) => res.writeHead(202).end(), 202],
    ['an SSE stream that ends', (res) => sseEvents(res, [progress('n', 1)]), 200],
  ])('notifications only, acknowledged with %s: no error for anyone', async (_, ack, status) => {
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'notifications/roots/list_changed') return false;
      ack(res);
      return true;
    };
    const { response } = await post(rig.endpoint, [
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
    ]);
    expect(response.status).toBe(status);
    expect(answeredIds(response)).toEqual([]);
  });

  it('an SSE stream that ends owing an answer, then the late answer on the same connection: one -32042, the late bytes go nowhere', async () => {
    let upstreamSocket: Socket | undefined;
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      const events = `data: ${JSON.stringify(progress('late', 1))}\n\n`;
      const late = `data: ${JSON.stringify(echoResult(message.id, 'late'))}\n\n`;
      upstreamSocket = res.socket as Socket;
      // A complete chunked stream, then the answer as a chunk after the last one.
      upstreamSocket.write(
        rawHead('200 OK', [
          ['Content-Type', 'text/event-stream'],
          ['Transfer-Encoding', 'chunked'],
        ]) + `${Buffer.byteLength(events).toString(16)}\r\n${events}\r\n0\r\n\r\n`,
      );
      // (then the connection ends: node's upstream server would never read another request on it)
      setTimeout(() => upstreamSocket?.end(`${Buffer.byteLength(late).toString(16)}\r\n${late}\r\n`), 30);
      return true;
    };
    // One client connection for both calls: a late answer relayed anywhere would show on it.
    const connection = await RawConnection.open(rig.endpoint);
    try {
      connection.write(rawPost(rig.endpoint, JSON.stringify(callRequest('late', 'echo', { text: 'x' }))));
      const first = await connection.response(0);
      expect(answeredIds(first)).toEqual(['late']);
      expect(outcomeOf(first, 'late')).toBe('-32042 unanswered');
      await until(
        () => (upstreamSocket?.destroyed === true ? true : undefined),
        'the late upstream to hang up',
      );
      rig.upstream.behaviour = undefined;
      connection.write(
        rawPost(rig.endpoint, JSON.stringify(callRequest('after-late', 'echo', { text: 'y' }))),
      );
      const next = await connection.response(1);
      expect(answeredIds(next)).toEqual(['after-late']);
      expect(outcomeOf(next, 'after-late')).toBe('result');
      expect(connection.received.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(2);
      expect(connection.received).not.toContain('"text":"late"');
    } finally {
      connection.close();
    }
  });

  it('2026-07-28 calls (Mcp-Method, Mcp-Name) acknowledged without an answer get one -32042 each', async () => {
    const acks: ((res: ServerResponse) => void)[] = [
      (res) => res.writeHead(202).end(),
      (res) => sseEvents(res, [progress('m', 1)]),
    ];
    let turn = 0;
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      acks[turn++ % acks.length]?.(res);
      return true;
    };
    for (const id of ['modern-202', 'modern-sse']) {
      const { response } = await post(rig.endpoint, modernCall(id, 'x'), modernHeaders('tools/call', 'echo'));
      expect(answeredIds(response)).toEqual([id]);
      expect(outcomeOf(response, id)).toBe('-32042 unanswered');
    }
    expect(turn).toBe(2);
  });

  it('in a session, a 202 or an SSE stream that ends owing an answer stays as it was (the GET stream may answer)', async () => {
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      if (message.id === 'in-session-202') res.writeHead(202).end();
      else sseEvents(res, [progress('s', 1)]);
      return true;
    };
    const accepted = await post(
      rig.endpoint,
      callRequest('in-session-202', 'echo', { text: 'x' }),
      rig.session,
    );
    expect([accepted.response.status, accepted.response.body]).toEqual([202, '']);
    const streamed = await post(
      rig.endpoint,
      callRequest('in-session-sse', 'echo', { text: 'x' }),
      rig.session,
    );
    expect(answeredIds(streamed.response)).toEqual([]);
  });
});

/** A logging notification carrying `size` bytes of padding. */
function padded(n: number, size: number): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: { level: 'info', data: `${n}:${'x'.repeat(size)}` },
  };
}

/** A 2026-07-28 subscriptions/listen request. */
function listenRequest(id: string): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications: { toolsListChanged: true }, _meta: statelessEnvelope('redteam13') },
  };
}

describe('redteam13: upstream connections kept after complete answers, dropped with the clients that leave', () => {
  const rig = useSessionRig({ gateway: { limits: { upstreamTimeoutMs: 3000, streamIdleMs: IDLE_MS } } });
  /** The upstream connection of each tools/call, by id. */
  const sockets = new Map<unknown, Socket>();

  beforeAll(async () => {
    await postJson(rig.endpoint, listRequest('known'), rig.session);
    await postJson(rig.endpoint, listRequest('known-sessionless'));
  });
  beforeEach(() => {
    rig.upstream.behaviour = undefined;
    sockets.clear();
  });

  /** Records each call's upstream connection, then answers it as `answer` says (undefined: the default). */
  function recordCalls(answer?: (exchange: UpstreamExchange) => void): void {
    rig.upstream.behaviour = (exchange) => {
      if (exchange.message.method !== 'tools/call') return false;
      sockets.set(exchange.message.id, exchange.req.socket);
      if (answer === undefined) return false;
      answer(exchange);
      return true;
    };
  }

  it('calls answered whole (JSON, SSE, refused 202s and SSE streams that ended owing) all go out on one keep-alive upstream connection', async () => {
    recordCalls(({ res, message }) => {
      const id = String(message.id);
      if (id.startsWith('json'))
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(echoResult(id, id)));
      else if (id.startsWith('sse')) sseEvents(res, [progress(id, 1), echoResult(id, id)]);
      else if (id.startsWith('ack')) res.writeHead(202).end();
      else sseEvents(res, [progress(id, 1)]);
    });
    const ids = ['json-1', 'sse-1', 'ack-1', 'ended-1', 'json-2', 'sse-2', 'ack-2', 'ended-2', 'json-3'];
    for (const id of ids) {
      const { response } = await post(rig.endpoint, callRequest(id, 'echo', { text: id }));
      expect(answeredIds(response)).toEqual([id]);
      expect(outcomeOf(response, id)).toBe(/^(json|sse)/.test(id) ? 'result' : '-32042 unanswered');
    }
    const first = sockets.get('json-1');
    expect(first).toBeDefined();
    expect(ids.filter((id) => sockets.get(id) !== first)).toEqual([]);
    expect(first?.destroyed).toBe(false);
  });

  it('a client that leaves a POST SSE stream takes the upstream request with it: no error logged, the gateway answers on', async () => {
    let upstreamClosed = false;
    recordCalls(({ res }) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(progress('left', 1))}\n\n`);
      res.once('close', () => (upstreamClosed = true));
    });
    const mark = rig.gateway.logs.length;
    for (const headers of [{}, rig.session]) {
      upstreamClosed = false;
      const connection = await RawConnection.open(rig.endpoint);
      connection.write(
        rawPost(
          rig.endpoint,
          JSON.stringify(callRequest('left', 'echo', { text: 'x' })),
          headerLines(headers),
        ),
      );
      await connection.waitFor((c) => c.responses[0]?.body.includes('progress') === true, 'the first event');
      connection.close();
      await until(() => (upstreamClosed ? true : undefined), 'the upstream stream to close');
    }
    const after = rig.gateway.logs.slice(mark);
    expect(after.filter((line) => (line.level as number) >= 50)).toEqual([]);
    expect(after.filter((line) => line.event === 'upstream.stream_broken')).toEqual([]);
    rig.upstream.behaviour = undefined;
    const { response } = await post(rig.endpoint, callRequest('after-left', 'echo', { text: 'y' }));
    expect(outcomeOf(response, 'after-left')).toBe('result');
  });

  it('a client that leaves its GET stream takes the upstream GET stream with it', async () => {
    const connection = await RawConnection.open(rig.endpoint);
    connection.write(
      rawRequest('GET', rig.endpoint, [['Accept', 'text/event-stream'], ...headerLines(rig.session)]),
    );
    const upstreamStream = await rig.upstream.waitForGetStream();
    const closed = new Promise<void>((resolve) => upstreamStream.once('close', resolve));
    await connection.waitFor((c) => c.responses[0]?.status === 200, 'the GET stream head');
    const mark = rig.gateway.logs.length;
    connection.close();
    await closed;
    expect(rig.gateway.logs.slice(mark).filter((line) => (line.level as number) >= 50)).toEqual([]);
  });

  it.each([
    ['sessionless', false],
    ['in a session', true],
  ])(
    '%s: a stream held back by a slow client ends whole (every event, then one -32042 only without a session)',
    async (_, inSession) => {
      const events = 160;
      let pushedBack = false;
      recordCalls(({ res }) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let n = 0; n < events; n++)
          if (!res.write(`data: ${JSON.stringify(padded(n, 64 * 1024))}\n\n`)) pushedBack = true;
        res.end();
      });
      const connection = await RawConnection.open(rig.endpoint);
      try {
        connection.pause();
        connection.write(
          rawPost(
            rig.endpoint,
            JSON.stringify(callRequest('held', 'echo', { text: 'x' })),
            headerLines(inSession ? rig.session : {}),
          ),
        );
        // Held for longer than the idle limit: a stream held back for the client is not the upstream's silence.
        await new Promise((resolve) => setTimeout(resolve, 2 * IDLE_MS));
        expect(pushedBack).toBe(true);
        connection.resume();
        const response = await connection.response(0, 10_000);
        const values = parseReplyBody('text/event-stream', response.body) as { method?: string }[];
        expect(values.filter((value) => value.method === 'notifications/message')).toHaveLength(events);
        expect(answeredIds(response)).toEqual(inSession ? [] : ['held']);
        if (!inSession) expect(outcomeOf(response, 'held')).toBe('-32042 unanswered');
      } finally {
        connection.close();
      }
    },
  );
});

describe('redteam13: a listening stream owes nothing (subscriptions/listen, GET)', () => {
  const rig = useSessionRig({ gateway: { limits: { upstreamTimeoutMs: 3000, streamIdleMs: IDLE_MS } } });
  const acknowledged = {
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: { level: 'info', data: 'listening' },
  };

  beforeEach(() => {
    rig.upstream.behaviour = undefined;
  });

  /** The upstream answers subscriptions/listen with one event, stays quiet `quietMs`, then ends as `end` says. */
  function listenFor(quietMs: number, end: (res: ServerResponse, id: unknown) => void): void {
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'subscriptions/listen') return false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(acknowledged)}\n\n`);
      setTimeout(() => end(res, message.id), quietMs);
      return true;
    };
  }

  it.each<[string, Record<string, string>, number]>([
    ['with Mcp-Method, quiet a moment', modernHeaders('subscriptions/listen'), 20],
    ['with Mcp-Method, quiet past the idle limit', modernHeaders('subscriptions/listen'), 2 * IDLE_MS],
    ['without Mcp-Method, quiet past the idle limit', { 'Mcp-Protocol-Version': '2026-07-28' }, 2 * IDLE_MS],
  ])(
    'a subscriptions/listen stream (%s), then ended by the upstream: no error for it (a disconnect the client listens again after)',
    async (_, headers, quietMs) => {
      listenFor(quietMs, (res) => res.end());
      const mark = rig.gateway.logs.length;
      const { response } = await post(rig.endpoint, listenRequest('listen-1'), headers);
      expect(response.status).toBe(200);
      expect(parseReplyBody('text/event-stream', response.body)).toEqual([acknowledged]);
      expect(answeredIds(response)).toEqual([]);
      expect(rig.gateway.logs.slice(mark).filter((line) => line.event === 'upstream.stream_broken')).toEqual(
        [],
      );
    },
  );

  it('a batch of a listen and a call: the call is owed its answer (one -32042 when the stream ends without it), the listen nothing', async () => {
    rig.upstream.behaviour = ({ res, request }) => {
      if (!request.messages.some((message) => message.method === 'subscriptions/listen')) return false;
      sseEvents(res, [acknowledged]);
      return true;
    };
    const { response } = await post(rig.endpoint, [listenRequest('listen-3'), modernCall('call-3', 'x')], {
      'Mcp-Protocol-Version': '2026-07-28',
    });
    expect(answeredIds(response)).toEqual(['call-3']);
    expect(outcomeOf(response, 'call-3')).toBe('-32042 unanswered');
  });

  it('a subscriptions/listen stream closed gracefully (its empty result) relays that result once', async () => {
    const closing = {
      jsonrpc: '2.0',
      id: 'listen-2',
      result: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-2' } },
    };
    listenFor(20, (res) => res.end(`data: ${JSON.stringify(closing)}\n\n`));
    const { response } = await post(
      rig.endpoint,
      listenRequest('listen-2'),
      modernHeaders('subscriptions/listen'),
    );
    expect(answeredIds(response)).toEqual(['listen-2']);
    expect(outcomeOf(response, 'listen-2')).toBe('result');
  });

  it('a GET stream the upstream ends gets no error', async () => {
    const connection = await RawConnection.open(rig.endpoint);
    try {
      connection.write(
        rawRequest('GET', rig.endpoint, [['Accept', 'text/event-stream'], ...headerLines(rig.session)]),
      );
      const upstreamStream = await rig.upstream.waitForGetStream();
      await new Promise((resolve) => setTimeout(resolve, 2 * IDLE_MS));
      upstreamStream.end(`data: ${JSON.stringify(acknowledged)}\n\n`);
      const response = await connection.response(0);
      expect(parseReplyBody('text/event-stream', response.body)).toEqual([acknowledged]);
    } finally {
      connection.close();
    }
  });
});
