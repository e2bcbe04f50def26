// Findings 3 to 8 of issue 11: upstream answers the gateway did not parse reaching the client.
import type { ServerResponse } from 'node:http';
import { callRequest } from '../support/rawMcp.js';
import {
  answerText,
  envelopeText,
  sentinelText,
  sseEvent,
  type EnvelopeShape,
  type SseShape,
} from './support/framing.js';
import { findLeaks, responsesIn } from './support/lenientRead.js';
import type { UpstreamExchange } from './support/maliciousUpstream.js';
import { exchangeRaw, headerOf, RawConnection, rawRequest } from './support/rawClient.js';
import { listRequest, postJson, type RawReply, useSessionRig } from './support/rig.js';
import { DRIFT_MARK, ECHO, EVIL_MARK } from './support/tools.js';

const rig = useSessionRig();
beforeEach(() => {
  rig.upstream.reset();
  rig.upstream.catalog = 'drifted';
});

/** Every tools/list (the client's and the gateway's own) is answered by `answer`. */
function answerListsWith(answer: (exchange: UpstreamExchange, id: unknown) => void): void {
  rig.upstream.behaviour = (exchange) => {
    const list = exchange.request.messages.find((message) => message.method === 'tools/list');
    if (list === undefined) return false;
    answer(exchange, list.id);
    return true;
  };
}

function driftedResult(): unknown {
  return { tools: rig.upstream.tools() };
}

function expectNoLeak(...texts: string[]): void {
  const leaks = findLeaks(...texts);
  expect(leaks.markers).toEqual([]);
  expect(leaks.unpinned).toEqual([]);
}

/** The drifted echo and the unpinned evil are refused with -32040, and the upstream runs neither. */
async function expectDriftedCallsRefused(): Promise<void> {
  for (const [id, name] of [
    ['call-echo', 'echo'],
    ['call-evil', 'evil'],
  ] as const) {
    const reply = await postJson(rig.endpoint, callRequest(id, name, { text: 'x', cmd: 'id' }), rig.session);
    expectNoLeak(reply.received);
    expect(responsesIn(reply.body)).toEqual([
      expect.objectContaining({ id, error: expect.objectContaining({ code: -32040 }) }),
    ]);
  }
  expect(rig.upstream.executed).toEqual([]);
}

/** The direct-connection reproduction: an SDK-free client reading the upstream's own answer gets the drifted tools. */
async function expectDirectLeak(headers: Record<string, string> = {}): Promise<void> {
  const direct = await postJson(rig.upstream.url, listRequest('direct'), headers);
  expect(findLeaks(direct.received).markers.sort()).toEqual([DRIFT_MARK, EVIL_MARK]);
  rig.upstream.requests.length = 0;
}

/** The gateway answered the list without anything unpinned: a verified listing, or an error for its id. */
function expectListVerifiedOrRefused(reply: RawReply, id: unknown): void {
  expectNoLeak(reply.received);
  const answers = responsesIn(reply.body).filter((message) => message.id === id);
  expect(answers).toHaveLength(1);
  const [answer] = answers as [{ result?: { tools?: unknown[] }; error?: { code?: number } }];
  if (answer.result !== undefined) expect(answer.result.tools).toEqual([]);
  else expect(answer.error?.code).toBe(-32042);
}

describe('finding 3: media types are compared case-insensitively, with parameters', () => {
  it.each([
    ['Application/JSON', 'json'],
    ['APPLICATION/JSON; charset=UTF-8', 'json'],
    ['application/json;charset="utf-8"', 'json'],
    ['Text/Event-Stream', 'sse'],
    ['TEXT/EVENT-STREAM; charset=utf-8', 'sse'],
  ] as const)('verifies a tools/list labelled %s', async (contentType, body) => {
    answerListsWith(({ res }, id) => {
      const json = envelopeText(id, driftedResult());
      answerText(res, contentType, body === 'json' ? json : sseEvent(json));
    });
    await expectDirectLeak();
    const reply = await postJson(rig.endpoint, listRequest('l3'), rig.session);
    expect(reply.status).toBe(200);
    const answer = responsesIn(reply.body).find((message) => message.id === 'l3') as
      { result?: { tools?: unknown[] } } | undefined;
    // Parsed as JSON or SSE, as the label says: the drifted echo and evil are filtered out.
    expect(answer?.result?.tools).toEqual([]);
    expectNoLeak(reply.received);
    await expectDriftedCallsRefused();
  });
});

describe('finding 4: every SSE data payload is parsed as JSON, never sniffed', () => {
  const shapes: [string, SseShape][] = [
    ['a leading space after "data: "', { dataPrefix: '  ' }],
    ['a leading tab', { dataPrefix: '\t' }],
    ['no space after "data:"', { dataPrefix: '' }],
    ['an empty first data line', { emptyFirstData: true }],
    ['data spread over several lines', { multiLine: true }],
    ['CRLF line endings', { lineEnd: '\r\n' }],
    ['CR line endings', { lineEnd: '\r' }],
    [
      'a comment, no event name, CR and a tab',
      { comment: true, event: undefined, lineEnd: '\r', dataPrefix: '\t' },
    ],
  ];
  it.each(shapes)('verifies a tools/list sent with %s', async (_what, shape) => {
    answerListsWith(({ res }, id) =>
      answerText(res, 'text/event-stream', sseEvent(envelopeText(id, driftedResult()), shape)),
    );
    await expectDirectLeak();
    const reply = await postJson(rig.endpoint, listRequest('l4'), rig.session);
    expectListVerifiedOrRefused(reply, 'l4');
    await expectDriftedCallsRefused();
  });

  it('re-encodes the events it relays in its own framing', async () => {
    rig.upstream.catalog = 'pinned';
    answerListsWith(({ res }, id) =>
      answerText(
        res,
        'text/event-stream',
        sseEvent(envelopeText(id, { tools: rig.upstream.tools() }), { dataPrefix: '\t', lineEnd: '\r' }),
      ),
    );
    const reply = await postJson(rig.endpoint, listRequest('l4b'), rig.session);
    expect(reply.status).toBe(200);
    expect(reply.body).not.toContain('\r');
    expect(reply.body).toMatch(/^(id: [^\n]*\n)?event: message\ndata: \{/);
    const answer = responsesIn(reply.body).find((message) => message.id === 'l4b') as {
      result: { tools: unknown[] };
    };
    expect(answer.result.tools).toEqual([ECHO]);
  });
});

describe('finding 5: an answer on the GET stream after a 202 on the POST', () => {
  it.each(['application/octet-stream', 'text/event-stream'])(
    'never relays the pending listing delivered on a GET stream labelled %s',
    async (streamType) => {
      let getStream: ServerResponse | undefined;
      rig.upstream.behaviour = ({ req, res, request }) => {
        if (req.method === 'GET') {
          res.writeHead(200, { 'content-type': streamType });
          res.write(': open\n\n');
          getStream = res;
          return true;
        }
        const list = request.messages.find((message) => message.method === 'tools/list');
        if (list === undefined) return false;
        res.writeHead(202).end();
        getStream?.write(sseEvent(envelopeText(list.id, driftedResult())));
        getStream?.write(sseEvent(sentinelText(`end-${String(list.id)}`)));
        return true;
      };
      const connection = await RawConnection.open(rig.endpoint);
      try {
        connection.write(
          rawRequest('GET', rig.endpoint, [['Accept', 'text/event-stream'], ...Object.entries(rig.session)]),
        );
        await connection.waitFor((c) => c.responses.length > 0, 'the GET stream to answer', 3000);
        const listReply = await postJson(rig.endpoint, listRequest('l5'), rig.session);
        expectNoLeak(listReply.received);
        const stream = connection.responses[0]!;
        if (stream.status === 200 && !connection.closed) {
          await connection.waitFor((c) => c.received.includes('end-l5') || c.closed, 'the upstream sentinel');
        }
        expectNoLeak(connection.received);
        if (streamType === 'application/octet-stream') {
          expect(stream.status).toBe(502);
          expect(responsesIn(stream.body)).toEqual([
            expect.objectContaining({
              id: null,
              error: expect.objectContaining({
                code: -32042,
                data: expect.objectContaining({ reason: 'media_type' }),
              }),
            }),
          ]);
        }
      } finally {
        connection.close();
      }
      await expectDriftedCallsRefused();
    },
  );
});

describe('finding 6: the answer to a pending tools/list inside another exchange', () => {
  it.each(['json', 'sse'] as const)(
    'is inspected when it rides in a ping answer (%s batch)',
    async (framing) => {
      let heldList: { res: ServerResponse; id: unknown } | undefined;
      const listArrived = new Promise<void>((resolve) => {
        rig.upstream.behaviour = ({ res, request }) => {
          const list = request.messages.find((message) => message.method === 'tools/list');
          if (list !== undefined) {
            heldList = { res, id: list.id };
            resolve();
            return true;
          }
          const ping = request.messages.find((message) => message.method === 'ping');
          if (ping === undefined || heldList === undefined) return false;
          const batch = `[${envelopeText(ping.id, {})},${envelopeText(heldList.id, driftedResult())}]`;
          if (framing === 'json') answerText(res, 'application/json', batch);
          else answerText(res, 'text/event-stream', sseEvent(batch));
          return true;
        };
      });
      const pendingList = postJson(rig.endpoint, listRequest('l6'), rig.session);
      pendingList.catch(() => undefined);
      await listArrived;
      const ping = await postJson(rig.endpoint, { jsonrpc: '2.0', id: 'p6', method: 'ping' }, rig.session);
      expectNoLeak(ping.received);
      expect(responsesIn(ping.body).find((message) => message.id === 'p6')).toEqual({
        jsonrpc: '2.0',
        id: 'p6',
        result: {},
      });
      // The held list is now answered honestly; whatever the client gets for it holds nothing unpinned.
      heldList!.res.writeHead(200, { 'content-type': 'application/json' });
      heldList!.res.end(envelopeText(heldList!.id, driftedResult()));
      expectNoLeak((await pendingList).received);
      await expectDriftedCallsRefused();
    },
  );
});

describe('finding 7: a listing envelope that is not valid JSON-RPC', () => {
  const shapes: [string, EnvelopeShape][] = [
    ['"error": null', { error: null }],
    ['"error": false', { error: false }],
    ['"method": null', { methodNull: true }],
    ['"error": null, result first', { error: null, reversed: true }],
  ];
  it.each(shapes)('turns a listing with %s into -32042 for its id (JSON)', async (_what, shape) => {
    answerListsWith(({ res }, id) =>
      answerText(res, 'application/json', envelopeText(id, driftedResult(), shape)),
    );
    await expectDirectLeak();
    const reply = await postJson(rig.endpoint, listRequest('l7'), rig.session);
    expectNoLeak(reply.received);
    expect(responsesIn(reply.body)).toEqual([
      expect.objectContaining({
        id: 'l7',
        error: expect.objectContaining({
          code: -32042,
          data: expect.objectContaining({ reason: 'invalid_message' }),
        }),
      }),
    ]);
    await expectDriftedCallsRefused();
  });

  it.each(shapes)('drops a listing with %s on an SSE answer', async (_what, shape) => {
    answerListsWith(({ res }, id) =>
      answerText(res, 'text/event-stream', sseEvent(envelopeText(id, driftedResult(), shape))),
    );
    const reply = await postJson(rig.endpoint, listRequest('l7s'), rig.session);
    expectNoLeak(reply.received);
    const answers = responsesIn(reply.body).filter((message) => message.id === 'l7s');
    expect(answers).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: -32042 }) })]);
    await expectDriftedCallsRefused();
  });
});

describe('finding 8: an upstream redirect is never relayed', () => {
  beforeEach(() => {
    rig.upstream.behaviour = ({ req, res }) => {
      if (req.url?.includes('direct') === true) return false;
      if (req.method === 'POST' && req.headers['x-follow-me'] === undefined) {
        const list = rig.upstream.requests
          .at(-1)
          ?.messages.find((message) => message.method === 'tools/list');
        if (list === undefined) return false;
      }
      res.writeHead(307, { location: `${rig.upstream.url}?direct=1`, 'content-length': 0 });
      res.end();
      return true;
    };
  });

  it('is real: a redirect-following client posts the list again to the Location and gets the drifted tools', async () => {
    const response = await fetch(rig.upstream.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(listRequest('direct-8')),
      redirect: 'follow',
    });
    expect(findLeaks(await response.text()).markers.sort()).toEqual([DRIFT_MARK, EVIL_MARK]);
    expect(rig.upstream.requests.map((request) => request.path)).toEqual(['/mcp', '/mcp?direct=1']);
  });

  it('answers a redirected POST with 502 and -32042 (redirect) per id, no Location; a following client stays on the gateway', async () => {
    const response = await fetch(rig.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...rig.session,
      },
      body: JSON.stringify(listRequest('l8')),
      redirect: 'follow',
    });
    const text = await response.text();
    expect(response.status).toBe(502);
    expect(response.headers.get('location')).toBeNull();
    expectNoLeak(text);
    expect(responsesIn(text)).toEqual([
      expect.objectContaining({
        id: 'l8',
        error: expect.objectContaining({
          code: -32042,
          data: expect.objectContaining({ reason: 'redirect' }),
        }),
      }),
    ]);
    expect(rig.upstream.requests.map((request) => request.path)).toEqual(['/mcp']);
  });

  it('answers a batch with one -32042 per forwarded id', async () => {
    const reply = await postJson(
      rig.endpoint,
      [listRequest('b1'), { jsonrpc: '2.0', id: 'b2', method: 'ping' }],
      rig.session,
    );
    expect(reply.status).toBe(502);
    expect(headerOf(reply, 'location')).toBeUndefined();
    const ids = responsesIn(reply.body).map((message) => [
      message.id,
      (message.error as { code?: number } | undefined)?.code,
    ]);
    expect(ids.sort()).toEqual([
      ['b1', -32042],
      ['b2', -32042],
    ]);
  });

  it('answers a redirected GET stream with 502 and one error, id null', async () => {
    const reply = await exchangeRaw(
      rig.endpoint,
      rawRequest('GET', rig.endpoint, [['Accept', 'text/event-stream'], ...Object.entries(rig.session)]),
      2000,
    );
    expect(reply.status).toBe(502);
    expect(headerOf(reply, 'location')).toBeUndefined();
    expect(responsesIn(reply.body)).toEqual([
      expect.objectContaining({
        id: null,
        error: expect.objectContaining({
          code: -32042,
          data: expect.objectContaining({ reason: 'redirect' }),
        }),
      }),
    ]);
    expect(rig.upstream.requests.map((request) => request.path)).toEqual(['/mcp']);
  });
});
