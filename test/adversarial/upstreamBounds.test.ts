// Findings 11 and 16 of issue 11: unbounded upstream reads, hung upstreams, truncated answers.
import { callRequest } from '../support/rawMcp.js';
import { responsesIn } from './support/lenientRead.js';
import { rawHead, writeRawResponse } from './support/maliciousUpstream.js';
import { exchangeRaw, RawConnection, rawPost } from './support/rawClient.js';
import { listRequest, openSession, postJson, type Rig, startRig, useSessionRig } from './support/rig.js';

function errorOf(body: string, id: unknown): { code?: number; data?: { reason?: string } } | undefined {
  return responsesIn(body).find((message) => message.id === id)?.error as
    { code?: number; data?: { reason?: string } } | undefined;
}

describe('finding 16: hung and truncated upstream answers (HTTP front)', () => {
  const rig = useSessionRig({ gateway: { limits: { upstreamTimeoutMs: 400 } } });
  beforeAll(async () => {
    // The session's catalog is known: later calls are decided without a fetch on miss.
    await postJson(rig.endpoint, listRequest('known'), rig.session);
  });
  beforeEach(() => {
    rig.upstream.behaviour = undefined;
    rig.upstream.requests.length = 0;
  });

  it('is real: a hung upstream takes a call and never answers it', async () => {
    rig.upstream.behaviour = ({ message }) => message.method === 'tools/call';
    const connection = await RawConnection.open(rig.upstream.url);
    try {
      connection.write(
        rawPost(rig.upstream.url, JSON.stringify(callRequest('direct', 'echo', { text: 'x' }))),
      );
      await connection.waitFor(() => rig.upstream.requests.length === 1, 'the upstream to take the call');
      expect(connection.responses).toEqual([]);
      expect(connection.received).toBe('');
    } finally {
      connection.close();
    }
  });

  it('answers a call the upstream never answers with 504 and -32041 (timeout) once upstreamTimeoutMs passed', async () => {
    rig.upstream.behaviour = ({ message }) => message.method === 'tools/call';
    const reply = await postJson(rig.endpoint, callRequest('hung', 'echo', { text: 'x' }), rig.session, 4000);
    expect(reply.status).toBe(504);
    expect(errorOf(reply.body, 'hung')).toEqual(
      expect.objectContaining({ code: -32041, data: expect.objectContaining({ reason: 'timeout' }) }),
    );
  });

  const truncated = (id: unknown): string => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      result: { content: [{ type: 'text', text: 'a'.repeat(200) }] },
    });
    return (
      rawHead('200 OK', [
        ['Content-Type', 'application/json'],
        ['Content-Length', Buffer.byteLength(body)],
        ['Connection', 'close'],
      ]) + body.slice(0, 60)
    );
  };

  it('is real: a truncated JSON answer with a lying Content-Length reaches a direct client as HTTP 200 with broken JSON', async () => {
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      writeRawResponse(res, truncated(message.id));
      return true;
    };
    const reply = await exchangeRaw(
      rig.upstream.url,
      rawPost(rig.upstream.url, JSON.stringify(callRequest('d', 'echo'))),
    );
    expect(reply.status).toBe(200);
    expect(() => JSON.parse(reply.body) as unknown).toThrow();
  });

  it.each([
    ['tools/call', callRequest('cut-call', 'echo', { text: 'x' })],
    ['tools/list', listRequest('cut-list')],
  ] as const)(
    'answers a %s whose JSON answer is cut mid-body with 502 and -32041 (closed)',
    async (method, request) => {
      rig.upstream.behaviour = ({ res, message }) => {
        if (message.method !== method) return false;
        writeRawResponse(res, truncated(message.id));
        return true;
      };
      const reply = await postJson(rig.endpoint, request, rig.session, 3000);
      expect(reply.status).toBe(502);
      expect(errorOf(reply.body, request.id)).toEqual(
        expect.objectContaining({ code: -32041, data: expect.objectContaining({ reason: 'closed' }) }),
      );
    },
  );

  it('answers a call whose upstream answer starts but breaks mid-body, never with 200 and broken JSON', async () => {
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[`);
      setImmediate(() => res.destroy());
      return true;
    };
    const reply = await postJson(
      rig.endpoint,
      callRequest('broken', 'echo', { text: 'x' }),
      rig.session,
      3000,
    );
    expect(reply.status).toBe(502);
    expect(errorOf(reply.body, 'broken')?.code).toBe(-32041);
  });

  it('stays up: the next call is answered', async () => {
    const reply = await postJson(rig.endpoint, callRequest('after', 'echo', { text: 'fine' }), rig.session);
    expect(responsesIn(reply.body)).toEqual([
      { jsonrpc: '2.0', id: 'after', result: { content: [{ type: 'text', text: 'echo: fine' }] } },
    ]);
  });
});

describe('finding 16: an SSE answer that goes idle (limits.streamIdleMs)', () => {
  const rig = useSessionRig({ gateway: { limits: { upstreamTimeoutMs: 2000, streamIdleMs: 300 } } });
  beforeAll(async () => {
    await postJson(rig.endpoint, listRequest('known'), rig.session);
  });

  it('gives each unanswered id a -32041 (timeout) event and ends the stream', async () => {
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': started\n\n');
      return true;
    };
    const reply = await postJson(rig.endpoint, callRequest('idle', 'echo', { text: 'x' }), rig.session, 4000);
    expect(reply.status).toBe(200);
    expect(errorOf(reply.body, 'idle')).toEqual(
      expect.objectContaining({ code: -32041, data: expect.objectContaining({ reason: 'timeout' }) }),
    );
  });
});

describe('finding 11: the fetch on miss reads a bounded answer', () => {
  const CAP = 160 * 1024 * 1024;
  let rig: Rig;
  let written = 0;
  let stopped: Promise<void>;

  beforeAll(async () => {
    // Default timeouts: only a bound on size can end this listing early.
    rig = await startRig();
  });
  afterAll(async () => rig?.close());

  it('refuses the call with an error, stops reading the endless listing, and stays up', async () => {
    let markStopped: () => void = () => undefined;
    stopped = new Promise((resolve) => (markStopped = resolve));
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/list') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.from(
        `{"name":"t","description":"${'x'.repeat(1000)}","inputSchema":{"type":"object"}},`.repeat(1024),
      );
      written = 0;
      const pump = (): void => {
        while (!res.destroyed && written < CAP) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        // Past the cap the body just ends, unterminated: a gateway without a bound read it all.
        if (!res.destroyed) res.end();
        markStopped();
      };
      res.once('close', markStopped);
      res.write(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"tools":[`);
      pump();
      return true;
    };
    const session = await openSession(rig.endpoint);
    // No listing in this session yet: the call makes the gateway list on its own.
    const reply = await postJson(rig.endpoint, callRequest('miss', 'echo', { text: 'x' }), session, 30_000);
    expect(responsesIn(reply.body)).toEqual([
      expect.objectContaining({ id: 'miss', error: expect.objectContaining({ code: expect.any(Number) }) }),
    ]);
    expect(rig.upstream.executed).toEqual([]);
    await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, 2000))]);
    // The gateway gave up before the upstream could push its whole endless body.
    expect(written).toBeLessThan(CAP);
    rig.upstream.behaviour = undefined;
    const ping = await postJson(rig.endpoint, { jsonrpc: '2.0', id: 'alive', method: 'ping' }, session);
    expect(responsesIn(ping.body)).toEqual([{ jsonrpc: '2.0', id: 'alive', result: {} }]);
  }, 40_000);
});
