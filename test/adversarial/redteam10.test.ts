import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express from 'express';
import { createLogger, pinGuard } from '@toolpin/gateway';
import { pinFor } from '../support/pinFor.js';
import { callRequest, openRawSession, postRaw, statelessEnvelope, type RawReply } from '../support/rawMcp.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { RAW_ECHO, rawFixtureCommand, stdioPinFor } from '../transports/support.js';
import { answerJson, hangForever } from './support/maliciousUpstream.js';
import { RawConnection, headerOf, rawPost, rawRequest } from './support/rawClient.js';
import { postJson, startRig, type Rig } from './support/rig.js';
import { startMaliciousUpstream, type MaliciousUpstream } from './support/maliciousUpstream.js';
import { PINNED_TOOLS } from './support/tools.js';

// Red team 10: the POST decision path decided in the turn the body arrives (03783b5): raw-body's
// callback, a batch decided in order synchronously until a call must wait for a listing, the
// `contained` hand-off of a throw or a rejection to the error answer, the body handed on instead of
// set on node's request.

const BATCH_REVISION = '2025-03-26';

/** Every unhandled rejection of the process while this file runs: there must be none. */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

/** Resolves once `done` holds (polled every 10 ms), rejects after `waitMs`. */
async function until(done: () => boolean, what: string, waitMs = 5000): Promise<void> {
  for (const end = Date.now() + waitMs; !done();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The JSON-RPC responses of a reply body (one value or a batch), by id. */
function responsesOf(body: string): Record<string, unknown>[] {
  const value = JSON.parse(body) as unknown;
  return (Array.isArray(value) ? value : [value]) as Record<string, unknown>[];
}

/** The ids of the responses, sorted as strings. */
function idsOf(responses: readonly Record<string, unknown>[]): string[] {
  return responses.map((response) => String(response.id)).sort();
}

const ping = (id: string): Record<string, unknown> => ({ jsonrpc: '2.0', id, method: 'ping' });
const NOTIFICATION = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };
/** A request without an id (JSON-RPC's notification form): dropped, never forwarded, never answered. */
const CALL_WITHOUT_ID = {
  jsonrpc: '2.0',
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: 'noid' } },
};

/** How the upstream answers the gateway's own tools/list (its fetch on miss) in a test. */
type ListingFate = 'ok' | '500' | 'hang' | '401' | '400';

/** Makes the upstream answer every tools/list as `fate` says; counts the listings. */
function listingsAnswered(rig: Rig, fate: ListingFate): { count: number } {
  const seen = { count: 0 };
  rig.upstream.behaviour = ({ res, message }) => {
    if (message.method !== 'tools/list') return false;
    seen.count += 1;
    if (fate === 'ok') return false;
    if (fate === 'hang') hangForever(res);
    else if (fate === '401')
      answerJson(res, { error: 'unauthorized' }, 401, {
        'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/x", scope="tools"',
      });
    else answerJson(res, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'no' } }, Number(fate));
    return true;
  };
  return seen;
}

/** The POST bodies the upstream received (the gateway's forwarding) that carry one of these ids or methods. */
function forwardedOf(rig: Rig, from: number): Record<string, unknown>[][] {
  return rig.upstream.requests
    .slice(from)
    .filter((request) => request.httpMethod === 'POST')
    .map((request) => [...request.messages])
    .filter((messages) => messages.every((message) => message.method !== 'tools/list'));
}

describe('redteam10: a batch decided in order, a listing failing in its middle (03783b5)', () => {
  let rig: Rig;
  let session: Record<string, string>;

  beforeAll(async () => {
    rig = await startRig({ gateway: { limits: { upstreamTimeoutMs: 300, maxBodyBytes: 4096 } } });
  });
  afterAll(async () => {
    await rig.close();
  });
  beforeEach(async () => {
    rig.upstream.reset();
    // A new session each time: its first call lists first (fetch on miss).
    session = await openRawSession(rig.endpoint, {}, BATCH_REVISION);
  });

  /** The mixed batch: a notification, a request without id, two pings around two calls that list first. */
  const MIXED = [
    NOTIFICATION,
    CALL_WITHOUT_ID,
    ping('a'),
    callRequest('b', 'echo', { text: 'b' }),
    callRequest('c', 'evil', { cmd: 'id' }),
    ping('d'),
  ];

  it.each(['500', 'hang'] as const)(
    'attack: the listing answers %s mid-batch: every request answered once, the calls refused, the rest forwarded in order',
    async (fate) => {
      const listings = listingsAnswered(rig, fate);
      const from = rig.upstream.requests.length;
      const reply = await postJson(rig.endpoint, MIXED, session, 5000);
      expect(reply.status).toBe(200);
      const responses = responsesOf(reply.body);
      expect(idsOf(responses)).toEqual(['a', 'b', 'c', 'd']);
      for (const id of ['b', 'c'])
        expect(responses.find((response) => response.id === id)).toMatchObject({
          error: { code: -32040 },
        });
      for (const id of ['a', 'd'])
        expect(responses.find((response) => response.id === id)).toMatchObject({ result: {} });
      // The first call's failed listing answers the second call too (one listing per body in vain,
      // not one per call); none ran.
      expect(listings.count).toBe(1);
      expect(rig.upstream.executed).toEqual([]);
      // One body upstream, the gateway's serialization in the client's order, the call without id dropped.
      expect(forwardedOf(rig, from)).toEqual([[NOTIFICATION, ping('a'), ping('d')]]);
      expect(rig.gateway.events('request.dropped').length).toBeGreaterThan(0);
    },
  );

  it('attack: a batch of 30 calls against a listing that hangs: one listing in vain, not 30 (each up to the timeout)', async () => {
    const listings = listingsAnswered(rig, 'hang');
    const batch = Array.from({ length: 30 }, (_, index) => callRequest(`n${index}`, 'echo', { text: 'x' }));
    const reply = await postJson(rig.endpoint, batch, session, 5000);
    expect(reply.status).toBe(200);
    const responses = responsesOf(reply.body);
    expect(responses).toHaveLength(30);
    for (const response of responses) expect(response).toMatchObject({ error: { code: -32040 } });
    expect(listings.count).toBe(1);
    expect(rig.upstream.executed).toEqual([]);
  });

  it('attack: the listing is refused with 401 + WWW-Authenticate mid-batch: the challenge, nothing of the batch upstream', async () => {
    listingsAnswered(rig, '401');
    const from = rig.upstream.requests.length;
    const reply = await postJson(rig.endpoint, MIXED, session);
    expect(reply.status).toBe(401);
    expect(headerOf(reply, 'www-authenticate')).toContain('resource_metadata=');
    expect(idsOf(responsesOf(reply.body))).toEqual(['b', 'c']);
    expect(forwardedOf(rig, from)).toEqual([]);
    expect(rig.upstream.executed).toEqual([]);
  });

  it('attack: the listing succeeds mid-batch: allowed and refused decided in order, the forwarded body keeps it', async () => {
    const listings = listingsAnswered(rig, 'ok');
    const from = rig.upstream.requests.length;
    const batch = [
      ping('a'),
      callRequest('b', 'echo', { text: 'b' }),
      callRequest('c', 'evil', { cmd: 'id' }),
      NOTIFICATION,
      callRequest('d', 'echo', { text: 'd' }),
      callRequest('e', 'echo', { wrong: 1 }),
      ping('f'),
    ];
    const reply = await postJson(rig.endpoint, batch, session);
    expect(reply.status).toBe(200);
    const responses = responsesOf(reply.body);
    expect(idsOf(responses)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(responses.find((response) => response.id === 'c')).toMatchObject({ error: { code: -32040 } });
    expect(responses.find((response) => response.id === 'e')).toMatchObject({ error: { code: -32040 } });
    expect(responses.find((response) => response.id === 'd')).toMatchObject({
      result: { content: [{ type: 'text', text: 'echo: d' }] },
    });
    expect(listings.count).toBe(1);
    expect(rig.upstream.executed).toEqual(['echo', 'echo']);
    expect(forwardedOf(rig, from)).toEqual([[ping('a'), batch[1], NOTIFICATION, batch[4], ping('f')]]);
  });

  it('attack: the listing succeeds for the LAST member only: the members before are decided at once and kept in order', async () => {
    const from = rig.upstream.requests.length;
    const listings = listingsAnswered(rig, 'ok');
    const batch = [ping('a'), NOTIFICATION, ping('b'), callRequest('c', 'echo', { text: 'c' })];
    const reply = await postJson(rig.endpoint, batch, session);
    expect(reply.status).toBe(200);
    expect(idsOf(responsesOf(reply.body))).toEqual(['a', 'b', 'c']);
    expect(listings.count).toBe(1);
    expect(forwardedOf(rig, from)).toEqual([batch]);
  });

  it('attack: only a refused call and a notification in a batch needing a listing: the refusal answered, the notification forwarded', async () => {
    listingsAnswered(rig, '500');
    const from = rig.upstream.requests.length;
    const reply = await postJson(
      rig.endpoint,
      [callRequest('x', 'echo', { text: 'x' }), NOTIFICATION],
      session,
    );
    expect(reply.status).toBe(200);
    expect(responsesOf(reply.body)).toEqual([expect.objectContaining({ id: 'x', error: expect.anything() })]);
    expect(forwardedOf(rig, from)).toEqual([[NOTIFICATION]]);
  });

  it('attack: a batch of duplicate ids around a listing: refused whole at parse (400, -32600), nothing listed or forwarded', async () => {
    const listings = listingsAnswered(rig, 'ok');
    const from = rig.upstream.requests.length;
    const batch = [
      callRequest('dup', 'echo', { text: '1' }),
      ping('x'),
      callRequest('dup', 'echo', { text: '2' }),
    ];
    const reply = await postJson(rig.endpoint, batch, session);
    expect(reply.status).toBe(400);
    expect(responsesOf(reply.body)).toEqual([
      expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) }),
    ]);
    expect(listings.count).toBe(0);
    expect(rig.upstream.requests.slice(from)).toEqual([]);
  });

  it('attack: a 2025-era batch without a session whose listing is refused with 400: session_required, nothing upstream', async () => {
    listingsAnswered(rig, '400');
    const from = rig.upstream.requests.length;
    const reply = await postJson(
      rig.endpoint,
      [ping('a'), callRequest('b', 'echo', { text: 'b' }), ping('c')],
      {
        'Mcp-Protocol-Version': BATCH_REVISION,
      },
    );
    expect(reply.status).toBe(400);
    expect(responsesOf(reply.body)).toEqual([
      expect.objectContaining({ id: null, error: expect.objectContaining({ code: expect.any(Number) }) }),
    ]);
    expect(forwardedOf(rig, from)).toEqual([]);
    expect(rig.gateway.events('request.session_required').length).toBeGreaterThan(0);
  });
});

describe('redteam10: a client that leaves while its call waits for a listing', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({ gateway: { limits: { upstreamTimeoutMs: 2000 } } });
  });
  afterAll(async () => {
    await rig.close();
  });

  it.each([
    ['a call', [callRequest('late', 'echo', { text: 'late' })]],
    ['a batch', [ping('p'), callRequest('late', 'echo', { text: 'late' }), NOTIFICATION]],
  ])(
    'attack: %s whose listing is slow, the client gone before it is decided: nothing is sent upstream',
    async (_label, body) => {
      rig.upstream.reset();
      const session = await openRawSession(rig.endpoint, {}, BATCH_REVISION);
      let listed = 0;
      rig.upstream.behaviour = async ({ message }) => {
        if (message.method !== 'tools/list') return false;
        await new Promise((resolve) => setTimeout(resolve, 300));
        listed += 1;
        return false;
      };
      const from = rig.upstream.requests.length;
      const connection = await RawConnection.open(rig.endpoint);
      connection.write(
        rawPost(rig.endpoint, JSON.stringify(body.length === 1 ? body[0] : body), Object.entries(session)),
      );
      // The gateway lists first; the client leaves while it waits.
      await until(() => rig.upstream.requests.length > from, 'the listing upstream');
      connection.close();
      await connection.whenClosed();
      await until(() => listed === 1, 'the listing answered');
      // Long enough for the decided body to have been forwarded, had it been.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(forwardedOf(rig, from)).toEqual([]);
      expect(rig.upstream.executed).toEqual([]);
      // The session goes on: the same id is a new request, decided and answered.
      const again = await postJson(rig.endpoint, callRequest('late', 'echo', { text: 'again' }), session);
      expect(JSON.parse(again.body)).toMatchObject({
        id: 'late',
        result: { content: [{ type: 'text', text: 'echo: again' }] },
      });
      expect(rig.upstream.executed).toEqual(['echo']);
    },
  );
});

describe('redteam10: pipelined requests, the first waiting for a listing and the rest decided at once', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig({ gateway: { limits: { upstreamTimeoutMs: 2000 } } });
  });
  afterAll(async () => {
    await rig.close();
  });

  it('attack: each pipelined response in request order, under its own id, once', async () => {
    const session = await openRawSession(rig.endpoint, {}, BATCH_REVISION);
    rig.upstream.behaviour = async ({ message }) => {
      if (message.method !== 'tools/list') return false;
      await new Promise((resolve) => setTimeout(resolve, 200));
      return false;
    };
    const bodies = [
      callRequest('slow', 'echo', { text: 'slow' }),
      ping('quick-1'),
      [ping('quick-2'), NOTIFICATION],
      callRequest('blocked', 'evil', {}),
      ping('quick-3'),
    ];
    const connection = await RawConnection.open(rig.endpoint);
    try {
      connection.write(
        Buffer.concat(
          bodies.map((body) => rawPost(rig.endpoint, JSON.stringify(body), Object.entries(session))),
        ),
      );
      await connection.waitFor(
        (c) => c.responses.length === bodies.length && c.responses.every((response) => response.complete),
        'every pipelined answer',
        5000,
      );
      expect(connection.responses.map((response) => idsOf(responsesOf(response.body)))).toEqual([
        ['slow'],
        ['quick-1'],
        ['quick-2'],
        ['blocked'],
        ['quick-3'],
      ]);
      expect(responsesOf(connection.responses[0]!.body)[0]).toMatchObject({ result: {} });
      expect(responsesOf(connection.responses[3]!.body)[0]).toMatchObject({ error: { code: -32040 } });
    } finally {
      connection.close();
    }
    expect(rig.upstream.executed).toEqual(['echo']);
  });
});

describe('redteam10: bodies read with raw-body callback, or inflated by express.raw (03783b5)', () => {
  let rig: Rig;
  let session: Record<string, string>;
  const LIMIT = 4096;

  beforeAll(async () => {
    rig = await startRig({ gateway: { limits: { upstreamTimeoutMs: 2000, maxBodyBytes: LIMIT } } });
  });
  afterAll(async () => {
    await rig.close();
  });
  beforeEach(async () => {
    rig.upstream.reset();
    session = await openRawSession(rig.endpoint, {}, BATCH_REVISION);
  });

  /** A POST's exact bytes: the session's headers, these extra header lines, the body as given. */
  function post(body: Buffer | string, extra: readonly (readonly [string, string | number])[]): Buffer {
    const lines: [string, string | number][] = [
      ['Content-Type', 'application/json'],
      ['Accept', 'application/json, text/event-stream'],
      ...Object.entries(session),
    ];
    return rawRequest('POST', rig.endpoint, [...lines, ...extra], body);
  }

  const refusedWhole = (status: number, code: number): Record<string, unknown> => ({
    status,
    body: { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code }) as unknown },
  });

  it.each([
    [
      'Content-Length over the limit (one byte sent)',
      () => post('[', [['Content-Length', LIMIT + 1]]),
      413,
      -32600,
    ],
    ['an empty body', () => post('', [['Content-Length', 0]]), 400, -32700],
    ['a body that is not JSON', () => post('hello', [['Content-Length', 5]]), 400, -32700],
    ['JSON that is not JSON-RPC', () => post('{"a":1}', [['Content-Length', 7]]), 400, -32600],
    [
      'a gzip body inflating past the limit',
      () => {
        const zipped = gzipSync(JSON.stringify(callRequest(1, 'echo', { text: 'x'.repeat(LIMIT * 4) })));
        return post(zipped, [
          ['Content-Encoding', 'gzip'],
          ['Content-Length', zipped.length],
        ]);
      },
      413,
      -32600,
    ],
    [
      'a gzip body inflating to nothing',
      () => {
        const zipped = gzipSync('');
        return post(zipped, [
          ['Content-Encoding', 'gzip'],
          ['Content-Length', zipped.length],
        ]);
      },
      400,
      -32700,
    ],
    [
      // Not inflatable: the client's bad request (-32600), not the gateway's failure (-32603).
      'a body labelled gzip that is not gzip',
      () =>
        post('not gzip at all', [
          ['Content-Encoding', 'gzip'],
          ['Content-Length', 15],
        ]),
      400,
      -32600,
    ],
    [
      'a chunked body growing past the limit',
      () => {
        const chunk = `400\r\n${' '.repeat(0x400)}\r\n`;
        return post(`${chunk.repeat(8)}0\r\n\r\n`, [['Transfer-Encoding', 'chunked']]);
      },
      413,
      -32600,
    ],
  ] as const)(
    'attack: %s: refused whole, as before, nothing upstream',
    async (_label, bytes, status, code) => {
      const from = rig.upstream.requests.length;
      const connection = await RawConnection.open(rig.endpoint);
      try {
        connection.write(bytes());
        const response = await connection.response(0, 4000);
        await connection.waitFor((c) => c.responses[0]?.complete === true, 'the whole answer', 4000);
        expect({ status: response.status, body: JSON.parse(response.body) as unknown }).toEqual(
          refusedWhole(status, code),
        );
        expect(headerOf(response, 'content-type')).toContain('application/json');
      } finally {
        connection.close();
      }
      expect(rig.upstream.requests.slice(from)).toEqual([]);
    },
  );

  it('attack: a client that leaves mid-body: logged as a 400 request.rejected, the next client served', async () => {
    const from = rig.upstream.requests.length;
    const before = rig.gateway.events('request.rejected').length;
    const connection = await RawConnection.open(rig.endpoint);
    connection.write(post('[{"jsonrpc":"2.0","id":1,', [['Content-Length', 1000]]));
    // The gateway has the head and part of the body: it is reading it when the client leaves.
    await new Promise((resolve) => setTimeout(resolve, 50));
    connection.close();
    await until(() => rig.gateway.events('request.rejected').length > before, 'the rejection line');
    expect(rig.gateway.events('request.rejected').slice(before)).toEqual([
      expect.objectContaining({ status: 400, server: 'mal' }),
    ]);
    expect(rig.upstream.requests.slice(from)).toEqual([]);
    const next = await postJson(rig.endpoint, ping('after'), session);
    expect(JSON.parse(next.body)).toEqual({ jsonrpc: '2.0', id: 'after', result: {} });
  });

  it('attack: a gzip batch whose call lists first (the inflating path, then a promise): answered once each, in order upstream', async () => {
    const listings = listingsAnswered(rig, 'ok');
    const from = rig.upstream.requests.length;
    const batch = [
      ping('a'),
      callRequest('b', 'echo', { text: 'zipped' }),
      callRequest('c', 'evil', {}),
      NOTIFICATION,
    ];
    const zipped = gzipSync(JSON.stringify(batch));
    const connection = await RawConnection.open(rig.endpoint);
    try {
      connection.write(
        post(zipped, [
          ['Content-Encoding', 'gzip'],
          ['Content-Length', zipped.length],
        ]),
      );
      const response = await connection.response(0, 4000);
      await connection.waitFor((c) => c.responses[0]?.complete === true, 'the whole answer', 4000);
      expect(response.status).toBe(200);
      const responses = responsesOf(response.body);
      expect(idsOf(responses)).toEqual(['a', 'b', 'c']);
      expect(responses.find((r) => r.id === 'c')).toMatchObject({ error: { code: -32040 } });
    } finally {
      connection.close();
    }
    expect(listings.count).toBe(1);
    expect(forwardedOf(rig, from)).toEqual([[ping('a'), batch[1], NOTIFICATION]]);
  });
});

describe('redteam10: a throw inside the decision reaches the error answer (contained), in the turn or after a listing', () => {
  let upstream: MaliciousUpstream;
  let server: Server;
  let endpoint: string;
  const lines: Record<string, unknown>[] = [];
  /** The next request.dropped line throws (a logger whose sink fails once, inside the decision). */
  let armed = false;

  beforeAll(async () => {
    upstream = await startMaliciousUpstream();
    const logger = createLogger({
      level: 'debug',
      destination: {
        write(line: string) {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          lines.push(parsed);
          if (armed && parsed.event === 'request.dropped') {
            armed = false;
            throw new Error('the log sink failed');
          }
        },
      },
    });
    const app = express();
    app.use('/mcp', pinGuard({ pin: pinFor('mal', upstream.url, PINNED_TOOLS), logger }));
    server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await upstream.close();
  });

  it.each([
    ['decided in the turn the body arrived (the catalog known)', true],
    ['decided after its first call listed (fetch on miss)', false],
  ])(
    'attack: a throw while a batch is %s: 500 -32603, nothing of the body upstream',
    async (_label, known) => {
      const session = await openRawSession(endpoint, {}, BATCH_REVISION);
      if (known) {
        const first = await postJson(endpoint, callRequest('first', 'echo', { text: 'first' }), session);
        expect(JSON.parse(first.body)).toMatchObject({ id: 'first', result: {} });
      }
      const from = upstream.requests.length;
      armed = true;
      const reply = await postJson(
        endpoint,
        [ping('a'), callRequest('b', 'echo', { text: 'b' }), CALL_WITHOUT_ID, ping('c')],
        session,
        4000,
      );
      expect(armed).toBe(false);
      expect(reply.status).toBe(500);
      expect(JSON.parse(reply.body)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32603, message: 'toolpin internal error' },
      });
      const reached = upstream.requests.slice(from).flatMap((request) => request.messages);
      expect(reached.filter((message) => message.method !== 'tools/list')).toEqual([]);
      expect(lines.filter((line) => line.event === 'request.rejected').at(-1)).toMatchObject({
        status: 500,
        err: 'the log sink failed',
      });
      // The gateway goes on serving that session.
      const after = await postJson(endpoint, ping('after'), session);
      expect(JSON.parse(after.body)).toEqual({ jsonrpc: '2.0', id: 'after', result: {} });
    },
  );
});

// The bridged fronts' registries are LiveLists now (aa9c58e): sharedUpstream's requests waiting for
// their answer (the silence clock walks them), statelessSession's answers in progress (a closing
// session lets them out).

const ENVELOPE = statelessEnvelope();
const TIMEOUT = {
  code: -32041,
  data: expect.objectContaining({ reason: 'timeout', server: 'raw' }) as unknown,
};

/** A 2026-07-28 request (no session) of credential `modern` to the bridged raw child. */
function stateless(url: string, id: string, method: 'tools/call' | 'tools/list'): Promise<RawReply> {
  const params =
    method === 'tools/call'
      ? { name: 'echo', arguments: { text: id }, _meta: ENVELOPE }
      : { _meta: ENVELOPE };
  return postRaw(
    url,
    { jsonrpc: '2.0', id, method, params },
    {
      authorization: 'Bearer modern',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(method === 'tools/call' ? { 'mcp-name': 'echo' } : {}),
    },
  );
}

/** The one JSON-RPC response of a reply, by id. */
function onlyAnswer(reply: RawReply, id: string): Record<string, unknown> {
  const answers = reply.messages.filter((message) => (message as { id?: unknown }).id === id);
  expect(answers).toHaveLength(1);
  return answers[0] as Record<string, unknown>;
}

describe('redteam10: a stdio child silent on its calls, behind the 2026-07-28 shared upstream', () => {
  let gateway: GatewayHarness;
  let url: string;

  beforeAll(async () => {
    gateway = await startGatewayHarness(
      [stdioPinFor('raw', rawFixtureCommand(), [RAW_ECHO], { TOOLPIN_RAW_HANG_CALLS: '1' })],
      { limits: { streamIdleMs: 800 } },
    );
    url = `${gateway.url}/raw/mcp`;
    // The credential's upstream opened (and its catalog listed) before the attack.
    const warm = await stateless(url, 'warm', 'tools/list');
    expect(warm.status).toBe(200);
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('attack: 12 concurrent silent calls beside 6 answered listings: each call one -32041 timeout, the listings untouched', async () => {
    const before = gateway.events('upstream.timeout');
    const calls = Array.from({ length: 12 }, (_, index) => stateless(url, `call-${index}`, 'tools/call'));
    const lists = Array.from({ length: 6 }, (_, index) => stateless(url, `list-${index}`, 'tools/list'));
    const listed = await Promise.all(lists);
    listed.forEach((reply, index) => {
      expect(onlyAnswer(reply, `list-${index}`)).toMatchObject({ result: { tools: [{ name: 'echo' }] } });
    });
    const called = await Promise.all(calls);
    called.forEach((reply, index) => {
      expect(reply.status).toBe(200);
      expect(onlyAnswer(reply, `call-${index}`)).toMatchObject({ error: TIMEOUT });
    });
    // The silence clock timed out the waiting calls, each once (one line per firing, counted).
    const lines = gateway.events('upstream.timeout').slice(before.length);
    const counted = lines.reduce((sum, line) => sum + Number(line.requests), 0);
    expect(counted).toBe(12);
    // The upstream goes on: a listing after the silence is answered.
    const after = await stateless(url, 'list-after', 'tools/list');
    expect(onlyAnswer(after, 'list-after')).toMatchObject({ result: { tools: [{ name: 'echo' }] } });
  });
});

/** Calls `echo` `count` times at once as credential `modern`; each settles to its reply or its error. */
function callsInFlight(url: string, count: number): Promise<({ reply: RawReply } | { error: unknown })[]> {
  return Promise.all(
    Array.from({ length: count }, (_, index) =>
      stateless(url, `call-${index}`, 'tools/call').then(
        (reply) => ({ reply }),
        (error: unknown) => ({ error }),
      ),
    ),
  );
}

describe('redteam10: a 2026-07-28 session ending while its answers are in progress over a stdio child', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-rt10-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A gateway bridging the raw child, silent on calls, its pid written into `pids`; its upstream open. */
  async function startSilent(): Promise<{
    gateway: GatewayHarness;
    url: string;
    pids: string;
    inFlight: (count: number) => Promise<void>;
  }> {
    const pids = await mkdtemp(join(dir, 'pids-'));
    const callLog = `${pids}.calls`;
    const env = { TOOLPIN_RAW_HANG_CALLS: '1', TOOLPIN_RAW_PID_DIR: pids, TOOLPIN_RAW_CALL_LOG: callLog };
    const gateway = await startGatewayHarness([stdioPinFor('raw', rawFixtureCommand(), [RAW_ECHO], env)], {
      limits: { streamIdleMs: 60_000 },
    });
    const url = `${gateway.url}/raw/mcp`;
    expect((await stateless(url, 'warm', 'tools/list')).status).toBe(200);
    /** Resolves once the child has read `count` calls (one line each in its call log). */
    const inFlight = (count: number): Promise<void> =>
      until(() => {
        const text = existsSync(callLog) ? readFileSync(callLog, 'utf8') : '';
        return text.split('\n').filter((line) => line !== '').length >= count;
      }, `${count} calls at the child`);
    return { gateway, url, pids, inFlight };
  }

  it('attack: the gateway closes now (graceMs 0) with 8 calls in flight: the session ends first, each call one -32041', async () => {
    const { gateway, url, inFlight } = await startSilent();
    try {
      const calls = callsInFlight(url, 8);
      await inFlight(8);
      await gateway.running.close({ graceMs: 0 });
      const settled = await calls;
      settled.forEach((outcome, index) => {
        expect(outcome).toHaveProperty('reply.status', 200);
        if ('reply' in outcome)
          expect(onlyAnswer(outcome.reply, `call-${index}`)).toMatchObject({ error: { code: -32041 } });
      });
    } finally {
      await gateway.close().catch(() => undefined);
    }
  });

  it('attack: the gateway closes with a grace the silent calls outlast: each connection ended at its end, none left hanging', async () => {
    const { gateway, url, inFlight } = await startSilent();
    try {
      const calls = callsInFlight(url, 8);
      await inFlight(8);
      await gateway.running.close({ graceMs: 300 });
      const settled = await calls;
      // Step 5 of the documented shutdown: what the grace did not see finish is ended.
      expect(settled.every((outcome) => 'error' in outcome)).toBe(true);
      expect(gateway.events('gateway.drain_timeout')).toEqual([expect.objectContaining({ forced: 8 })]);
    } finally {
      await gateway.close().catch(() => undefined);
    }
  });

  it('attack: the child dies with 8 calls in flight: each call one -32041, the next request opens a new child', async () => {
    const { gateway, url, pids, inFlight } = await startSilent();
    try {
      const children = await readdir(pids);
      expect(children).toHaveLength(1);
      const calls = callsInFlight(url, 8);
      await inFlight(8);
      for (const pid of children) process.kill(Number(pid), 'SIGKILL');
      const settled = await calls;
      settled.forEach((outcome, index) => {
        expect(outcome).toHaveProperty('reply.status', 200);
        if ('reply' in outcome)
          expect(onlyAnswer(outcome.reply, `call-${index}`)).toMatchObject({ error: { code: -32041 } });
      });
      const after = await stateless(url, 'list-after', 'tools/list');
      expect(onlyAnswer(after, 'list-after')).toMatchObject({ result: { tools: [{ name: 'echo' }] } });
    } finally {
      await gateway.close();
    }
  });
});
