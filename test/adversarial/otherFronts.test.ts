// The same raw-upstream attacks on the other fronts that serve an HTTP upstream: 2026-07-28 clients
// (stateless, through the proxy on /<name>/mcp) and legacy HTTP+SSE clients (/<name>/sse, bridged).
import { answerText, envelopeText, sseEvent } from './support/framing.js';
import { findLeaks, lenientMessages, responsesIn } from './support/lenientRead.js';
import type { UpstreamExchange } from './support/maliciousUpstream.js';
import { exchangeRaw, RawConnection, rawPost, rawRequest } from './support/rawClient.js';
import { type Rig, SERVER, useRig } from './support/rig.js';
import { ECHO, ECHO_DRIFTED, EVIL } from './support/tools.js';
import { utf7SmuggledBody } from './support/utf7.js';
import { statelessEnvelope } from '../support/rawMcp.js';

/** How the upstream answers a tools/list in each attack (findings 3, 4, 6 are per exchange, 7, 9). */
const ATTACKS: readonly [string, (exchange: UpstreamExchange, id: unknown) => void][] = [
  [
    'labelled Application/JSON (3)',
    ({ res }, id) => answerText(res, 'Application/JSON', envelopeText(id, { tools: [ECHO_DRIFTED, EVIL] })),
  ],
  [
    'as an SSE event whose data starts with a tab (4)',
    ({ res }, id) =>
      answerText(
        res,
        'text/event-stream',
        sseEvent(envelopeText(id, { tools: [ECHO_DRIFTED, EVIL] }), { dataPrefix: '\t' }),
      ),
  ],
  [
    'with "error": null beside the result (7)',
    ({ res }, id) =>
      answerText(res, 'application/json', envelopeText(id, { tools: [ECHO_DRIFTED, EVIL] }, { error: null })),
  ],
  [
    'with members the pin does not record (9)',
    ({ res }, id) =>
      answerText(
        res,
        'application/json',
        envelopeText(id, { tools: [{ ...ECHO, _meta: { note: 'EVIL-9c1d' } }] }),
      ),
  ],
];

function answerListsWith(rig: Rig, answer: (exchange: UpstreamExchange, id: unknown) => void): void {
  rig.upstream.behaviour = (exchange) => {
    const list = exchange.request.messages.find((message) => message.method === 'tools/list');
    if (list === undefined) return false;
    answer(exchange, list.id);
    return true;
  };
}

function expectNoLeak(...texts: string[]): void {
  const leaks = findLeaks(...texts);
  expect(leaks.markers).toEqual([]);
  expect(leaks.unpinned).toEqual([]);
}

const ENVELOPE = statelessEnvelope('raw-adversary');

function modernRequest(
  id: string,
  method: string,
  params: Record<string, unknown> = {},
): { body: string; headers: [string, string][] } {
  const headers: [string, string][] = [
    ['Mcp-Protocol-Version', '2026-07-28'],
    ['Mcp-Method', method],
  ];
  if (method === 'tools/call') headers.push(['Mcp-Name', String(params.name)]);
  return {
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } }),
    headers,
  };
}

describe('2026-07-28 clients on the HTTP front (stateless, through the proxy)', () => {
  const rig = useRig({ upstream: { sessions: false } });
  beforeEach(() => {
    rig.upstream.reset();
    rig.upstream.catalog = 'drifted';
  });

  it.each(ATTACKS)(
    'never relays a listing answered %s, and refuses the drifted calls',
    async (what, answer) => {
      answerListsWith(rig, answer);
      const list = modernRequest('m-list', 'tools/list');
      const reply = await exchangeRaw(rig.endpoint, rawPost(rig.endpoint, list.body, list.headers));
      expectNoLeak(reply.received);
      // With only unrecorded members added (9), echo is still the pinned definition: its call passes.
      const refusedNames = what.endsWith('(9)') ? ['evil'] : ['echo', 'evil'];
      for (const name of refusedNames) {
        const call = modernRequest(`m-${name}`, 'tools/call', { name, arguments: { text: 'x' } });
        const refused = await exchangeRaw(rig.endpoint, rawPost(rig.endpoint, call.body, call.headers));
        expectNoLeak(refused.received);
        expect(responsesIn(refused.body)).toEqual([
          expect.objectContaining({ id: `m-${name}`, error: expect.objectContaining({ code: -32040 }) }),
        ]);
      }
      expect(rig.upstream.executed).toEqual([]);
    },
  );

  it('refuses a UTF-7 labelled 2026-07-28 request with 415 and forwards nothing', async () => {
    const reply = await exchangeRaw(
      rig.endpoint,
      rawPost(
        rig.endpoint,
        utf7SmuggledBody('ping', 'evil'),
        [
          ['Mcp-Protocol-Version', '2026-07-28'],
          ['Mcp-Method', 'ping'],
        ],
        'application/json; charset=utf-7',
      ),
    );
    expect(reply.status).toBe(415);
    expect(rig.upstream.requests).toEqual([]);
  });

  it('answers an upstream redirect with 502 and -32042 (redirect), no Location', async () => {
    rig.upstream.behaviour = ({ res }) => {
      res.writeHead(307, { location: `${rig.upstream.url}?direct=1`, 'content-length': 0 }).end();
      return true;
    };
    const list = modernRequest('m-redirect', 'tools/list');
    const reply = await exchangeRaw(rig.endpoint, rawPost(rig.endpoint, list.body, list.headers));
    expect(reply.status).toBe(502);
    expect(reply.headers.some(([name]) => name === 'location')).toBe(false);
    expect(responsesIn(reply.body)).toEqual([
      expect.objectContaining({
        id: 'm-redirect',
        error: expect.objectContaining({
          code: -32042,
          data: expect.objectContaining({ reason: 'redirect' }),
        }),
      }),
    ]);
  });
});

/** A legacy HTTP+SSE client session over the raw client: the stream, and where to post. */
async function openLegacySession(base: string): Promise<{ stream: RawConnection; post: string }> {
  const url = `${base}/${SERVER}/sse`;
  const stream = await RawConnection.open(url);
  stream.write(rawRequest('GET', url, [['Accept', 'text/event-stream']]));
  await stream.waitFor((c) => /event: endpoint\r?\ndata: [^\r\n]+/.test(c.received), 'the endpoint event');
  const path = /event: endpoint\r?\ndata: ([^\r\n]+)/.exec(stream.received)?.[1] ?? '';
  return { stream, post: new URL(path, url).href };
}

function idsOnStream(stream: RawConnection): unknown[] {
  return lenientMessages(stream.responses[0]?.body ?? '').map((message) => (message as { id?: unknown }).id);
}

describe('legacy HTTP+SSE clients on the same HTTP upstream (/<name>/sse, bridged)', () => {
  const rig = useRig();
  beforeEach(() => {
    rig.upstream.reset();
    rig.upstream.catalog = 'drifted';
  });

  it.each(ATTACKS)(
    'never relays a listing answered %s, and refuses the drifted calls',
    async (what, answer) => {
      answerListsWith(rig, answer);
      const { stream, post } = await openLegacySession(rig.gateway.url);
      try {
        const send = async (message: unknown): Promise<void> => {
          const reply = await exchangeRaw(post, rawPost(post, JSON.stringify(message)));
          expect(reply.status).toBe(202);
        };
        await send({
          jsonrpc: '2.0',
          id: 'init',
          method: 'initialize',
          params: {
            protocolVersion: '2024-11-05',
            capabilities: {},
            clientInfo: { name: 'raw-legacy', version: '1' },
          },
        });
        await stream.waitFor((c) => idsOnStream(c).includes('init'), 'the initialize answer');
        await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        await send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
        await stream.waitFor((c) => idsOnStream(c).includes('list'), 'an answer to the list');
        // With only unrecorded members added (9), echo is still the pinned definition: its call passes.
        const refusedNames = what.endsWith('(9)') ? ['evil'] : ['echo', 'evil'];
        for (const name of refusedNames) {
          await send({
            jsonrpc: '2.0',
            id: `call-${name}`,
            method: 'tools/call',
            params: { name, arguments: { text: 'x' } },
          });
          await stream.waitFor(
            (c) => idsOnStream(c).includes(`call-${name}`),
            `an answer to the ${name} call`,
          );
        }
        expectNoLeak(stream.received);
        const calls = lenientMessages(stream.responses[0]?.body ?? '').filter((message) =>
          String((message as { id?: unknown }).id).startsWith('call-'),
        );
        expect(calls).toEqual(
          refusedNames.map(() =>
            expect.objectContaining({ error: expect.objectContaining({ code: -32040 }) }),
          ),
        );
      } finally {
        stream.close();
      }
      expect(rig.upstream.executed).toEqual([]);
    },
  );
});
