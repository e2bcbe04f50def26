// Issue 11, "Must show": whatever framing the upstream uses for its answers, no tool definition whose
// digest is not pinned reaches the client, and no drifted or unpinned call reaches the upstream.
import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { callRequest } from '../support/rawMcp.js';
import {
  answerText,
  envelopeText,
  sentinelText,
  sseEvent,
  type EnvelopeShape,
  type SseShape,
} from './support/framing.js';
import { findLeaks } from './support/lenientRead.js';
import type { UpstreamExchange } from './support/maliciousUpstream.js';
import { RawConnection, rawRequest } from './support/rawClient.js';
import { listRequest, openSession, postJson, type RawReply, useRig } from './support/rig.js';
import { ECHO, ECHO_DRIFTED, EVIL } from './support/tools.js';

/** Which exchange carries the answer to the client's tools/list. */
type Carrier = 'post' | 'get-stream' | 'in-ping-answer';

interface Scenario {
  readonly catalog: 'drifted' | 'pinned';
  readonly carrier: Carrier;
  readonly body: 'json' | 'sse';
  readonly mediaType: string;
  readonly getStreamType: string;
  readonly sse: SseShape;
  readonly envelope: EnvelopeShape;
  /** The answer inside a batch array, with a notification beside it. */
  readonly batched: boolean;
}

/** A media type spelled with random case, optional whitespace and parameters. */
function spelled(base: string): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.array(fc.boolean(), { minLength: base.length, maxLength: base.length }),
      fc.constantFrom(
        '',
        ';charset=utf-8',
        '; charset=UTF-8',
        ' ;  charset="utf-8"',
        '; profile=x',
        '; q=1; charset=utf-8',
      ),
    )
    .map(
      ([upper, parameters]) =>
        [...base].map((c, i) => (upper[i] === true ? c.toUpperCase() : c)).join('') + parameters,
    );
}

const sseShape: fc.Arbitrary<SseShape> = fc.record(
  {
    lineEnd: fc.constantFrom('\n' as const, '\r\n' as const, '\r' as const),
    dataPrefix: fc.constantFrom(' ', '', '\t', '  ', ' \t', '\n'.slice(1)),
    multiLine: fc.boolean(),
    emptyFirstData: fc.boolean(),
    comment: fc.boolean(),
    event: fc.constantFrom<string | undefined>('message', undefined, 'Message'),
    id: fc.constantFrom('1', 'ev-7', ''),
  },
  { requiredKeys: ['lineEnd', 'dataPrefix'] },
);

// Mostly valid envelopes (key order, extra members, duplicate keys: JSON.parse keeps the last),
// sometimes ones that are not valid JSON-RPC (an `error` or `method` beside `result`).
const envelopeShape: fc.Arbitrary<EnvelopeShape> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      {
        reversed: fc.boolean(),
        extraMember: fc.boolean(),
        decoyResult: fc.constantFrom<unknown>({ tools: [ECHO] }, { tools: [ECHO_DRIFTED, EVIL] }),
      },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        reversed: fc.boolean(),
        error: fc.constantFrom<null | false>(null, false),
        methodNull: fc.boolean(),
      },
      { requiredKeys: ['error'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ methodNull: fc.constant(true) }) },
);

const scenario: fc.Arbitrary<Scenario> = fc
  .record({
    catalog: fc.constantFrom<'drifted' | 'pinned'>('drifted', 'drifted', 'drifted', 'pinned'),
    carrier: fc.constantFrom<Carrier>('post', 'post', 'get-stream', 'in-ping-answer'),
    body: fc.constantFrom<'json' | 'sse'>('json', 'sse'),
    json: spelled('application/json'),
    sseType: spelled('text/event-stream'),
    getStreamType: fc.oneof(spelled('text/event-stream'), fc.constant('application/octet-stream')),
    sse: sseShape,
    envelope: envelopeShape,
    batched: fc.boolean(),
  })
  .map(({ json, sseType, ...rest }) => ({ ...rest, mediaType: rest.body === 'json' ? json : sseType }));

/** Plain framings of an honest upstream: the pinned echo must reach the client. */
const HONEST_JSON: Scenario = {
  catalog: 'pinned',
  carrier: 'post',
  body: 'json',
  mediaType: 'application/json',
  getStreamType: 'text/event-stream',
  sse: {},
  envelope: {},
  batched: false,
};
const HONEST_SSE: Scenario = {
  ...HONEST_JSON,
  body: 'sse',
  mediaType: 'Text/Event-Stream; charset=utf-8',
  sse: { lineEnd: '\r', dataPrefix: '\t' },
};

// A short upstream timeout bounds a run whose listing never comes.
const rig = useRig({ gateway: { limits: { upstreamTimeoutMs: 600 } } });

/** The tools/list answer as the scenario spells it (one body; a batch when asked). */
function listingBody(s: Scenario, id: unknown, extra: string[] = []): string {
  const message = envelopeText(id, { tools: rig.upstream.tools() }, s.envelope);
  const notice = sentinelText('beside');
  const messages = [...extra, message, ...(s.batched ? [notice] : [])];
  const json = messages.length > 1 ? `[${messages.join(',')}]` : message;
  return s.body === 'json' ? json : sseEvent(json, s.sse);
}

/** The upstream's behaviour for one run; `listId` is the client's own tools/list. */
function behaveAs(s: Scenario, listId: string): (exchange: UpstreamExchange) => boolean {
  let getStream: ServerResponse | undefined;
  let heldList: ServerResponse | undefined;
  return ({ req, res, request }) => {
    if (req.method === 'GET' && s.carrier === 'get-stream') {
      res.writeHead(200, { 'content-type': s.getStreamType });
      res.write(': open\n\n');
      getStream = res;
      return true;
    }
    const list = request.messages.find((message) => message.method === 'tools/list');
    const ping = request.messages.find((message) => message.method === 'ping');
    if (list !== undefined && list.id === listId && s.carrier === 'get-stream') {
      res.writeHead(202).end();
      getStream?.write(sseEvent(envelopeText(list.id, { tools: rig.upstream.tools() }, s.envelope), s.sse));
      getStream?.write(sseEvent(sentinelText(`end-${listId}`), s.sse));
      return true;
    }
    if (list !== undefined && list.id === listId && s.carrier === 'in-ping-answer') {
      heldList = res;
      return true;
    }
    if (ping !== undefined && s.carrier === 'in-ping-answer') {
      const body = listingBody(s, listId, [envelopeText(ping.id, {})]);
      answerText(res, s.mediaType, body);
      if (heldList !== undefined) answerText(heldList, s.mediaType, listingBody(s, listId));
      return true;
    }
    if (list !== undefined) {
      // The client's list on a POST, and the gateway's own listing (fetch on miss).
      answerText(res, s.mediaType, listingBody(s, list.id));
      return true;
    }
    return false;
  };
}

async function runScenario(s: Scenario, run: number): Promise<string[]> {
  rig.upstream.reset();
  rig.upstream.catalog = s.catalog;
  const listId = `L-${run}`;
  const session = await openSession(rig.endpoint);
  rig.upstream.behaviour = behaveAs(s, listId);
  const received: string[] = [];
  let stream: RawConnection | undefined;
  try {
    if (s.carrier === 'get-stream') {
      stream = await RawConnection.open(rig.endpoint);
      stream.write(
        rawRequest('GET', rig.endpoint, [['Accept', 'text/event-stream'], ...Object.entries(session)]),
      );
      await stream.waitFor((c) => c.responses.length > 0 || c.closed, 'the GET stream', 3000);
    }
    const listing = postJson(rig.endpoint, listRequest(listId), session, 4000);
    let ping: Promise<RawReply> | undefined;
    if (s.carrier === 'in-ping-answer') {
      await new Promise<void>((resolve) => {
        const started = Date.now();
        const check = (): void => {
          if (
            rig.upstream.requests.some((r) => r.messages.some((m) => m.id === listId)) ||
            Date.now() - started > 2000
          )
            resolve();
          else setTimeout(check, 5);
        };
        check();
      });
      ping = postJson(rig.endpoint, { jsonrpc: '2.0', id: `P-${run}`, method: 'ping' }, session, 4000);
    }
    for (const reply of await Promise.allSettled([listing, ...(ping === undefined ? [] : [ping])]))
      if (reply.status === 'fulfilled') received.push(reply.value.received);
    if (stream !== undefined) {
      // The stream is ordered: once the sentinel (or the end) is here, the listing before it is too.
      // A GET answered whole (the gateway's 502 for a stream it refused, a body of known length) is
      // an end as well: nothing more can come on it, so there is no sentinel to wait out.
      await stream
        .waitFor(
          (c) => c.received.includes(`end-${listId}`) || c.closed || c.responses[0]?.complete === true,
          'the stream sentinel',
          800,
        )
        .catch(() => undefined);
      received.push(stream.received);
    }
    for (const name of ['echo', 'evil']) {
      const call = await postJson(
        rig.endpoint,
        callRequest(`C-${run}-${name}`, name, { text: 'x', cmd: 'id' }),
        session,
        4000,
      );
      received.push(call.received);
    }
  } finally {
    stream?.close();
  }
  return received;
}

describe('property: framing variations of upstream answers never get an unpinned definition to the client', () => {
  it('holds for media-type spelling, SSE spelling, batching, carrier exchange and envelope variants', async () => {
    let run = 0;
    let delivered = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const received = await runScenario(s, ++run);
        if (s.catalog === 'pinned' && received.some((text) => text.includes(String(ECHO.description))))
          delivered++;
        const leaks = findLeaks(...received);
        if (leaks.markers.length > 0 || leaks.unpinned.length > 0)
          throw new Error(`leaked to the client: ${JSON.stringify(leaks)}\n${received.join('\n---\n')}`);
        // evil is never pinned; echo is drifted in a drifted run: neither call may reach the upstream.
        const forbidden = s.catalog === 'drifted' ? ['echo', 'evil'] : ['evil'];
        const reached = rig.upstream.executed.filter((name) => forbidden.includes(name));
        if (reached.length > 0) throw new Error(`reached the upstream: ${reached.join(', ')}`);
      }),
      { numRuns: 50, endOnFailure: true, examples: [[HONEST_JSON], [HONEST_SSE]] },
    );
    // Not vacuous: honest listings in valid framings do get through (the two examples at least).
    expect(delivered).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
