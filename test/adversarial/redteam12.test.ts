import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { callRequest } from '../support/rawMcp.js';
import { until } from '../support/until.js';
import { responsesIn, responseTo } from './support/lenientRead.js';
import { rawHead, writeRawResponse, type UpstreamBehaviour } from './support/maliciousUpstream.js';
import { headerLines, RawConnection, rawPost } from './support/rawClient.js';
import { listRequest, postJson, useSessionRig } from './support/rig.js';

// Red team 12: readBounded reads the upstream's http.IncomingMessage (every JSON answer the proxy
// relays, jsonResponse.ts readUpstreamBody) by its own events (data, end, error, close), not its
// async iterator. Attacked from the upstream: answers cut short, reset, too large, gone silent,
// reset after they ended, delimited by the close, followed by smuggled bytes.

/** The gateway's bound on an upstream answer (DEFAULT_MAX_UPSTREAM_BYTES; not configurable). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
const IDLE_MS = 300;

/** The text of the pinned echo's answer to `id`. */
function echoAnswer(id: unknown, text: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });
}

/** A behaviour answering every tools/call with `answer` (the others keep the default MCP answers). */
function onCall(answer: (res: ServerResponse, id: unknown, socket: Socket) => void): UpstreamBehaviour {
  return ({ res, message }) => {
    if (message.method !== 'tools/call') return false;
    answer(res, message.id, res.socket as Socket);
    return true;
  };
}

/** The error the gateway answered `id` with: its code and reason, or undefined (no error for it). */
function failureOf(body: string, id: unknown): { code: unknown; reason: unknown } | undefined {
  const error = responseTo(body, id)?.error as { code?: unknown; data?: { reason?: unknown } } | undefined;
  return error === undefined ? undefined : { code: error.code, reason: error.data?.reason };
}

/** How many HTTP responses the raw bytes hold (status lines), whatever a parser made of them. */
function statusLines(received: string): number {
  return received.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
}

/**
 * Sends each request on one keep-alive client connection, one after the other, and returns the
 * responses and every byte the connection received once each was answered.
 */
async function sendInTurn(
  endpoint: string,
  session: Record<string, string>,
  requests: readonly Record<string, unknown>[],
): Promise<{ bodies: string[]; statuses: number[]; received: string }> {
  const connection = await RawConnection.open(endpoint);
  try {
    for (const [index, request] of requests.entries()) {
      connection.write(rawPost(endpoint, JSON.stringify(request), headerLines(session)));
      await connection.response(index, 5000);
    }
    // Anything more the gateway wrote (a second answer) has time to arrive before it is counted.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return {
      bodies: connection.responses.map((response) => response.body),
      statuses: connection.responses.map((response) => response.status),
      received: connection.received,
    };
  } finally {
    connection.close();
  }
}

const cutBody = echoAnswer('cut', 'y'.repeat(300)).slice(0, 120);

/** A Content-Length promising 500 bytes more than those written. */
function shortOfLength(id: unknown): string {
  const body = echoAnswer(id, 'y'.repeat(300)).slice(0, 120);
  return (
    rawHead('200 OK', [
      ['Content-Type', 'application/json'],
      ['Content-Length', Buffer.byteLength(body) + 500],
    ]) + body
  );
}

/** A chunked body missing its last chunk. */
function chunkedWithoutEnd(): string {
  return (
    rawHead('200 OK', [
      ['Content-Type', 'application/json'],
      ['Transfer-Encoding', 'chunked'],
    ]) + `${Buffer.byteLength(cutBody).toString(16)}\r\n${cutBody}\r\n`
  );
}

/**
 * Writes `bytes`, then resets the connection (RST) a moment later: a reset in the same instant can
 * reach the gateway's kernel before it read the bytes, which discards them (the headers with them).
 */
function resetAfter(socket: Socket, bytes: string): void {
  socket.write(bytes, () => setTimeout(() => socket.resetAndDestroy(), 50));
}

describe('redteam12: JSON answers cut short or reset (in-process gateway)', () => {
  // In-process: an unhandled 'error' of a dropped upstream message would fail this jest run.
  const rig = useSessionRig({ gateway: { limits: { upstreamTimeoutMs: 3000, streamIdleMs: 3000 } } });
  let round = 0;

  beforeAll(async () => {
    // The session's catalog is known: calls are relayed without a listing first.
    await postJson(rig.endpoint, listRequest('known'), rig.session);
  });
  beforeEach(() => {
    rig.upstream.behaviour = undefined;
  });

  /** The gateway still answers a call the upstream answers well. */
  async function expectAlive(id: string): Promise<void> {
    rig.upstream.behaviour = undefined;
    const reply = await postJson(rig.endpoint, callRequest(id, 'echo', { text: 'alive' }), rig.session);
    expect(responsesIn(reply.body)).toEqual([JSON.parse(echoAnswer(id, 'echo: alive'))]);
  }

  it.each<[string, (res: ServerResponse, id: unknown, socket: Socket) => void]>([
    [
      'a Content-Length larger than the bytes sent, then FIN',
      (res, id) => writeRawResponse(res, shortOfLength(id)),
    ],
    [
      'a Content-Length larger than the bytes sent, then RST',
      (_, id, socket) => resetAfter(socket, shortOfLength(id)),
    ],
    ['a chunked body without its last chunk, then FIN', (res) => writeRawResponse(res, chunkedWithoutEnd())],
    [
      'a chunked body without its last chunk, then RST',
      (_, __, socket) => resetAfter(socket, chunkedWithoutEnd()),
    ],
    [
      'headers and part of a body, then the socket destroyed a moment later',
      (_, id, socket) => {
        socket.write(shortOfLength(id));
        setTimeout(() => socket.destroy(), 30);
      },
    ],
  ])(
    'answers %s with one -32041 (closed) error, and the next request on the connection too',
    async (_, cut) => {
      rig.upstream.behaviour = onCall(cut);
      const id = `cut-${++round}`;
      const { bodies, statuses, received } = await sendInTurn(rig.endpoint, rig.session, [
        callRequest(id, 'echo', { text: 'x' }),
        { jsonrpc: '2.0', id: 'next', method: 'ping' },
      ]);
      // Exactly one answer per request, the first an error for it and never the shorter body.
      expect(statusLines(received)).toBe(2);
      expect(statuses[0]).toBe(502);
      expect(responsesIn(bodies[0] ?? '')).toHaveLength(1);
      expect(failureOf(bodies[0] ?? '', id)).toEqual({ code: -32041, reason: 'closed' });
      expect(received).not.toContain('yyyy');
      expect(responsesIn(bodies[1] ?? '')).toEqual([{ jsonrpc: '2.0', id: 'next', result: {} }]);
      await expectAlive(`alive-${round}`);
    },
  );

  it('survives 20 upstream connections reset right after a complete answer: one answer per request', async () => {
    let answered = 0;
    rig.upstream.behaviour = onCall((_, id, socket) => {
      const body = echoAnswer(id, 'echo: whole');
      const bytes =
        rawHead('200 OK', [
          ['Content-Type', 'application/json'],
          ['Content-Length', Buffer.byteLength(body)],
          ['Connection', 'keep-alive'],
        ]) + body;
      // At once (with the answer), or once the socket is back in the gateway's keep-alive pool.
      const reset = (): void => void socket.resetAndDestroy();
      socket.write(bytes, () => (answered++ % 2 === 0 ? reset() : setTimeout(reset, 15)));
    });
    const requests = Array.from({ length: 20 }, (_, n) => callRequest(`r${n}`, 'echo', { text: 'x' }));
    const { bodies, received } = await sendInTurn(rig.endpoint, rig.session, requests);
    expect(statusLines(received)).toBe(requests.length);
    for (const [n, body] of bodies.entries()) {
      const responses = responsesIn(body);
      expect(responses).toHaveLength(1);
      // The whole answer, or (the gateway wrote on a socket the reset had not reached yet) an error.
      const whole = JSON.parse(echoAnswer(`r${n}`, 'echo: whole')) as unknown;
      if (responses[0]?.error === undefined) expect(responses[0]).toEqual(whole);
      else expect(responses[0]).toEqual(expect.objectContaining({ id: `r${n}` }));
    }
    expect(bodies.filter((body) => body.includes('echo: whole')).length).toBeGreaterThan(0);
    await expectAlive('alive-resets');
  });

  it('drops the upstream answer a client left while its JSON body was still being read', async () => {
    let upstreamSocket: Socket | undefined;
    let upstreamClosed = false;
    rig.upstream.behaviour = onCall((_res, id, socket) => {
      upstreamSocket = socket;
      socket.once('close', () => (upstreamClosed = true));
      // Headers and the start of a body, then nothing: the rest never comes.
      socket.write(shortOfLength(id));
    });
    const connection = await RawConnection.open(rig.endpoint);
    connection.write(
      rawPost(
        rig.endpoint,
        JSON.stringify(callRequest('left', 'echo', { text: 'x' })),
        headerLines(rig.session),
      ),
    );
    await until(() => upstreamSocket, 'the call reached the upstream');
    connection.close();
    // Long before the idle limit (3 s here), the gateway closes the upstream connection it read for nobody.
    await until(() => (upstreamClosed ? true : undefined), 'the upstream connection closed', 80);
  });

  it('answers four calls cut at once, on four connections, each with its own error', async () => {
    rig.upstream.behaviour = onCall((res, id, socket) =>
      String(id).endsWith('0') || String(id).endsWith('2')
        ? writeRawResponse(res, shortOfLength(id))
        : resetAfter(socket, chunkedWithoutEnd()),
    );
    const ids = ['c0', 'c1', 'c2', 'c3'];
    const replies = await Promise.all(
      ids.map((id) => sendInTurn(rig.endpoint, rig.session, [callRequest(id, 'echo', { text: 'x' })])),
    );
    for (const [n, reply] of replies.entries()) {
      expect(statusLines(reply.received)).toBe(1);
      expect(responsesIn(reply.bodies[0] ?? '')).toHaveLength(1);
      expect(failureOf(reply.bodies[0] ?? '', ids[n])).toEqual({ code: -32041, reason: 'closed' });
    }
    await expectAlive('alive-concurrent');
  });
});

describe('redteam12: idle, oversized, close-delimited and smuggled answers (in-process gateway)', () => {
  const rig = useSessionRig({ gateway: { limits: { upstreamTimeoutMs: 3000, streamIdleMs: IDLE_MS } } });
  /** The upstream connection each request (by id) came on. */
  const sockets = new Map<unknown, Socket>();

  beforeAll(async () => {
    await postJson(rig.endpoint, listRequest('known'), rig.session);
  });
  beforeEach(() => {
    rig.upstream.behaviour = undefined;
    sockets.clear();
  });

  /** Records the upstream connection of each request, then behaves as `behaviour`. */
  function recording(behaviour: UpstreamBehaviour): UpstreamBehaviour {
    return (exchange) => {
      sockets.set(exchange.message.id, exchange.req.socket);
      return behaviour(exchange);
    };
  }

  /** A ping answered well, on an upstream connection other than `refused` (closed by then). */
  async function expectFreshConnection(refused: Socket, id: string): Promise<void> {
    rig.upstream.behaviour = recording(() => false);
    const reply = await postJson(rig.endpoint, { jsonrpc: '2.0', id, method: 'ping' }, rig.session);
    expect(responsesIn(reply.body)).toEqual([{ jsonrpc: '2.0', id, result: {} }]);
    expect(sockets.get(id)).toBeDefined();
    expect(sockets.get(id)).not.toBe(refused);
    // The gateway hung up on it (a socket kept in its keep-alive pool would never close).
    await until(() => (refused.destroyed ? true : undefined), 'the refused upstream connection to close');
  }

  it.each([
    ['headers only', ''],
    ['headers and part of the body', cutBody.slice(0, 40)],
  ])(
    'answers an upstream gone silent after %s with -32041 (timeout), and drops that connection',
    async (_, part) => {
      rig.upstream.behaviour = recording(
        onCall((_res, _id, socket) =>
          socket.write(
            rawHead('200 OK', [
              ['Content-Type', 'application/json'],
              ['Content-Length', 400],
            ]) + part,
          ),
        ),
      );
      // Bounded by a few idle times: the deadline of the body, not the 3 s to the headers.
      const reply = await postJson(
        rig.endpoint,
        callRequest('idle', 'echo', { text: 'x' }),
        rig.session,
        IDLE_MS * 8,
      );
      expect(reply.status).toBe(502);
      expect(responsesIn(reply.body)).toHaveLength(1);
      expect(failureOf(reply.body, 'idle')).toEqual({ code: -32041, reason: 'timeout' });
      const refused = sockets.get('idle') as Socket;
      await expectFreshConnection(refused, 'after-idle');
    },
  );

  /** Past the bound by more than socket buffers hold: a gateway that stops takes less than all. */
  const TOTAL = MAX_RESPONSE_BYTES + 32 * 1024 * 1024;

  /**
   * A call answered by `send` with a body of {@link TOTAL} bytes: refused as too large with one
   * -32042, and its upstream connection dropped (kept in the keep-alive pool, it would never close).
   */
  async function expectRefusedAsTooLarge(
    send: (res: ServerResponse, socket: Socket, head: string) => void,
  ): Promise<void> {
    rig.upstream.behaviour = recording(
      onCall((res, id, socket) =>
        send(res, socket, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"text":"`),
      ),
    );
    const reply = await postJson(
      rig.endpoint,
      callRequest('big', 'echo', { text: 'x' }),
      rig.session,
      20_000,
    );
    expect(reply.status).toBe(502);
    expect(responsesIn(reply.body)).toHaveLength(1);
    // An answer the gateway cannot read whole cannot be verified: -32042.
    expect(failureOf(reply.body, 'big')).toEqual({ code: -32042, reason: 'too_large' });
    await expectFreshConnection(sockets.get('big') as Socket, 'after-big');
  }

  it('refuses an answer over the bound sent at once (-32042 too_large), and drops the connection', async () => {
    await expectRefusedAsTooLarge((_, socket, head) => {
      const body = Buffer.alloc(TOTAL, 'z');
      body.write(head);
      socket.write(
        rawHead('200 OK', [
          ['Content-Type', 'application/json'],
          ['Content-Length', TOTAL],
        ]),
      );
      socket.write(body);
    });
  }, 30_000);

  it('refuses an answer over the bound sent slowly in chunks, and stops reading it before its end', async () => {
    let written = 0;
    await expectRefusedAsTooLarge((res, _, head) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(head);
      const chunk = Buffer.alloc(64 * 1024, 'z');
      const pump = (): void => {
        if (res.destroyed || written >= TOTAL) return;
        written += chunk.length;
        if (res.write(chunk)) setImmediate(pump);
        else res.once('drain', pump);
      };
      pump();
    });
    // The gateway hung up before the upstream could hand over the whole body.
    expect(written).toBeLessThan(TOTAL);
  }, 30_000);

  it('relays whole an answer delimited by the close of the connection (its end comes before its close)', async () => {
    rig.upstream.behaviour = onCall((res, id) =>
      writeRawResponse(
        res,
        rawHead('200 OK', [
          ['Content-Type', 'application/json'],
          ['Connection', 'close'],
        ]) + echoAnswer(id, 'echo: until close'),
      ),
    );
    const { bodies, statuses, received } = await sendInTurn(rig.endpoint, rig.session, [
      callRequest('eof', 'echo', { text: 'x' }),
    ]);
    expect(statusLines(received)).toBe(1);
    expect(statuses).toEqual([200]);
    expect(responsesIn(bodies[0] ?? '')).toEqual([JSON.parse(echoAnswer('eof', 'echo: until close'))]);
  });

  it('relays a complete answer once, and no later request reads the response smuggled after it', async () => {
    rig.upstream.behaviour = recording(({ res, message }) => {
      if (message.id !== 'first') return false;
      const socket = res.socket as Socket;
      {
        const body = echoAnswer(message.id, 'echo: first');
        const smuggled = echoAnswer('next', 'echo: SMUGGLED');
        socket.write(
          rawHead('200 OK', [
            ['Content-Type', 'application/json'],
            ['Content-Length', Buffer.byteLength(body)],
          ]) +
            body +
            rawHead('200 OK', [
              ['Content-Type', 'application/json'],
              ['Content-Length', Buffer.byteLength(smuggled)],
            ]) +
            smuggled,
        );
      }
      return true;
    });
    const { bodies, received } = await sendInTurn(rig.endpoint, rig.session, [
      callRequest('first', 'echo', { text: 'x' }),
      callRequest('next', 'echo', { text: 'fine' }),
    ]);
    expect(statusLines(received)).toBe(2);
    expect(received).not.toContain('SMUGGLED');
    expect(responsesIn(bodies[0] ?? '')).toEqual([JSON.parse(echoAnswer('first', 'echo: first'))]);
    expect(responsesIn(bodies[1] ?? '')).toEqual([JSON.parse(echoAnswer('next', 'echo: fine'))]);
    // The second call went out on a new upstream connection: the one that smuggled was dropped.
    expect(sockets.get('next')).not.toBe(sockets.get('first'));
  });

  // Without a session, a request's answer can come on its own response only: a success without a
  // message would leave the client waiting for answers that never come. (In a session they may
  // come on its GET stream: answerCorrelation.test.ts judges one there.)
  async function expectUnanswered(
    id: string,
    answer: string,
    status: number,
    logged: Record<string, unknown>,
  ): Promise<void> {
    rig.upstream.behaviour = onCall((res) => writeRawResponse(res, answer));
    const mark = rig.gateway.logs.length;
    const { bodies, statuses, received } = await sendInTurn(rig.endpoint, {}, [
      callRequest(id, 'echo', { text: 'x' }),
    ]);
    expect(statusLines(received)).toBe(1);
    expect(statuses[0]).toBe(status);
    expect(responsesIn(bodies[0] ?? '')).toHaveLength(1);
    expect(failureOf(bodies[0] ?? '', id)).toEqual({ code: -32042, reason: 'unanswered' });
    expect(rig.gateway.logs.slice(mark)).toContainEqual(expect.objectContaining(logged));
  }

  it.each<[string, string]>([
    ['202 with no media type', rawHead('202 Accepted', [['Content-Length', 0]])],
    [
      '200 application/json with an empty body',
      rawHead('200 OK', [
        ['Content-Type', 'application/json'],
        ['Content-Length', 0],
      ]),
    ],
  ])(
    'answers a sessionless call the upstream answered with %s: one -32042 (unanswered) error, and logs why',
    (_, head) =>
      expectUnanswered('empty', head, 502, { event: 'upstream.refused_answer', err: 'unanswered' }),
  );

  it('answers a sessionless call whose SSE answer ended without it: one -32042 (unanswered) event, and logs why', async () => {
    const events = ': nothing to say\n\n';
    const head = rawHead('200 OK', [
      ['Content-Type', 'text/event-stream'],
      ['Content-Length', Buffer.byteLength(events)],
    ]);
    await expectUnanswered('ended', head + events, 200, { event: 'upstream.stream_broken' });
  });

  it('still relays a 202 with no body to a notification as it is', async () => {
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'notifications/roots/list_changed') return false;
      writeRawResponse(res, rawHead('202 Accepted', [['Content-Length', 0]]));
      return true;
    };
    const reply = await postJson(
      rig.endpoint,
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      rig.session,
    );
    expect([reply.status, reply.body]).toEqual([202, '']);
  });
});
