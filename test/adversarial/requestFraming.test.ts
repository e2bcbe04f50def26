// Findings 1 and 2 of issue 11: request bodies the gateway did not parse reaching the upstream.
import { defaultTools, startV1Server, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { openRawSession } from '../support/rawMcp.js';
import { exchangeRaw, headerOf, RawConnection, rawPost, rawRequest } from './support/rawClient.js';
import { responsesIn } from './support/lenientRead.js';
import { useSessionRig } from './support/rig.js';
import { EVIL } from './support/tools.js';
import { utf7SmuggledBody } from './support/utf7.js';

/** A complete HTTP/1.1 POST of a tools/call of `evil`: what a smuggler hides in a body. */
function smuggledCall(url: string): string {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 'smuggled',
    method: 'tools/call',
    params: { name: 'evil', arguments: { cmd: 'id' } },
  });
  return rawPost(url, body).toString('latin1');
}

/** The body framed as one chunk and the last chunk. */
function chunked(body: string): string {
  return `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
}

describe('finding 1: a body on GET, DELETE, OPTIONS or PUT never reaches the upstream', () => {
  const rig = useSessionRig();
  beforeEach(() => {
    rig.upstream.requests.length = 0;
    rig.upstream.executed.length = 0;
  });

  it('is real: a Node upstream reads a body left unframed after a GET as a second request and executes it', async () => {
    // What a proxy emits when it drops the hop-by-hop framing (Transfer-Encoding, or a
    // Content-Length the client named in Connection) and pipes the body on.
    const connection = await RawConnection.open(rig.upstream.url);
    try {
      connection.write(
        rawRequest('GET', rig.upstream.url, [
          ['Accept', 'text/event-stream'],
          ['Mcp-Session-Id', 'upstream-session-1'],
        ]).toString('latin1') + smuggledCall(rig.upstream.url),
      );
      await connection.waitFor(() => rig.upstream.executed.length > 0, 'the smuggled call to run');
    } finally {
      connection.close();
    }
    expect(rig.upstream.executed).toEqual(['evil']);
    expect(rig.upstream.requests.map((request) => request.httpMethod)).toEqual(['GET', 'POST']);
  });

  const smugglers: readonly [string, string, (url: string) => Buffer][] = [
    [
      'GET',
      'chunked',
      (url) =>
        rawRequest(
          'GET',
          url,
          [
            ['Accept', 'text/event-stream'],
            ['Transfer-Encoding', 'chunked'],
          ],
          chunked(smuggledCall(url)),
        ),
    ],
    [
      'GET',
      'Content-Length listed in Connection',
      (url) => {
        const body = smuggledCall(url);
        return rawRequest(
          'GET',
          url,
          [
            ['Accept', 'text/event-stream'],
            ['Connection', 'keep-alive, Content-Length'],
            ['Content-Length', Buffer.byteLength(body)],
          ],
          body,
        );
      },
    ],
    [
      'DELETE',
      'chunked',
      (url) => rawRequest('DELETE', url, [['Transfer-Encoding', 'chunked']], chunked(smuggledCall(url))),
    ],
    [
      'DELETE',
      'Content-Length listed in Connection',
      (url) => {
        const body = smuggledCall(url);
        return rawRequest(
          'DELETE',
          url,
          [
            ['Connection', 'Content-Length'],
            ['Content-Length', Buffer.byteLength(body)],
          ],
          body,
        );
      },
    ],
  ];

  it.each(smugglers)(
    'refuses a %s with a body (%s): 400, -32600, Connection: close, nothing upstream',
    async (method, _how, build) => {
      const logsBefore = rig.gateway.logs.length;
      const withSession = (bytes: Buffer): Buffer => {
        // The session id goes in as a header line right after Host.
        const text = bytes.toString('latin1');
        const at = text.indexOf('\r\n', text.indexOf('Host:')) + 2;
        return Buffer.from(
          `${text.slice(0, at)}Mcp-Session-Id: ${rig.session['Mcp-Session-Id']}\r\n${text.slice(at)}`,
          'latin1',
        );
      };
      const reply = await exchangeRaw(rig.endpoint, withSession(build(rig.endpoint)));
      expect(reply.status).toBe(400);
      expect(headerOf(reply, 'connection')?.toLowerCase()).toBe('close');
      expect(responsesIn(reply.body)).toEqual([
        expect.objectContaining({
          jsonrpc: '2.0',
          id: null,
          error: expect.objectContaining({ code: -32600 }),
        }),
      ]);
      // A later request through the gateway: whatever was left on an upstream socket would be read by now.
      const ping = await exchangeRaw(
        rig.endpoint,
        rawPost(rig.endpoint, '{"jsonrpc":"2.0","id":"after","method":"ping"}', Object.entries(rig.session)),
      );
      expect(ping.status).toBe(200);
      expect(rig.upstream.executed).toEqual([]);
      expect(rig.upstream.requests.map((request) => request.httpMethod)).toEqual(['POST']);
      expect(rig.upstream.requests[0]?.messages.map((message) => message.method)).toEqual(['ping']);
      expect(rig.gateway.logs.slice(logsBefore).some((line) => Number(line.level) >= 40)).toBe(true);
      void method;
    },
  );

  it.each(['OPTIONS', 'PUT', 'PATCH'])(
    'answers %s with a body 405, Allow: GET, POST, DELETE, nothing upstream',
    async (method) => {
      const body = smuggledCall(rig.endpoint);
      const reply = await exchangeRaw(
        rig.endpoint,
        rawRequest(
          method,
          rig.endpoint,
          [
            ['Content-Type', 'application/json'],
            ['Mcp-Session-Id', rig.session['Mcp-Session-Id'] ?? ''],
            ['Transfer-Encoding', 'chunked'],
          ],
          chunked(body),
        ),
      );
      expect(reply.status).toBe(405);
      expect(headerOf(reply, 'allow')?.replace(/\s/g, '')).toBe('GET,POST,DELETE');
      expect(responsesIn(reply.body)).toEqual([
        expect.objectContaining({
          jsonrpc: '2.0',
          id: null,
          error: expect.objectContaining({ code: -32600 }),
        }),
      ]);
      expect(rig.upstream.requests).toEqual([]);
      expect(rig.upstream.executed).toEqual([]);
    },
  );

  it('sends the upstream its own framing: explicit Content-Length, no Transfer-Encoding, nothing the Connection header named', async () => {
    const body = '{"jsonrpc":"2.0","id":7,"method":"ping"}';
    const reply = await exchangeRaw(
      rig.endpoint,
      rawRequest(
        'POST',
        rig.endpoint,
        [
          ['Content-Type', 'application/json'],
          ['Accept', 'application/json, text/event-stream'],
          ...Object.entries(rig.session),
          ['Connection', 'keep-alive, X-Hop'],
          ['X-Hop', 'per-hop'],
          ['Transfer-Encoding', 'chunked'],
        ],
        chunked(body),
      ),
    );
    expect(reply.status).toBe(200);
    const [received] = rig.upstream.requests;
    expect(received?.headers['content-length']).toBe(String(Buffer.byteLength(received?.text ?? '')));
    expect(received?.headers['transfer-encoding']).toBeUndefined();
    expect(received?.headers['x-hop']).toBeUndefined();
    expect(received?.text).toBe(JSON.stringify(JSON.parse(body)));
  });

  it('answers pipelined requests after a refused GET body with nothing forwarded from the connection', async () => {
    const connection = await RawConnection.open(rig.endpoint);
    try {
      const body = smuggledCall(rig.endpoint);
      connection.write(
        Buffer.concat([
          rawRequest(
            'GET',
            rig.endpoint,
            [
              ['Accept', 'text/event-stream'],
              ['Mcp-Session-Id', rig.session['Mcp-Session-Id'] ?? ''],
              ['Content-Length', Buffer.byteLength(body)],
            ],
            body,
          ),
          Buffer.from(smuggledCall(rig.endpoint), 'latin1'),
        ]),
      );
      const first = await connection.response(0);
      expect(first.status).toBe(400);
      await connection.whenClosed();
    } finally {
      connection.close();
    }
    expect(rig.upstream.executed).toEqual([]);
  });
});

describe('finding 2: a request body is decoded only as UTF-8', () => {
  let peer: PeerHandle;
  let gateway: GatewayHarness;
  let endpoint: string;

  beforeAll(async () => {
    const [echo] = defaultTools();
    // The SDK v1 server behind express.json(): express 5 decodes the body in its declared charset.
    peer = await startV1Server({ mode: 'stateful-sse', tools: [echo!, EVIL as never] });
    gateway = await startGatewayHarness([pinFor('utf', peer.url, [echo!])]);
    endpoint = `${gateway.url}/utf/mcp`;
  });
  afterAll(async () => {
    await gateway.close();
    await peer.close();
  });

  it.each(['echo', 'ping'] as const)(
    'is real: express.json() decodes a body that reads as %s in UTF-8 as a tools/call of evil in UTF-7, and the SDK server runs it',
    async (visible) => {
      const before = peer.callCount('evil');
      const headers = await openRawSession(peer.url);
      const reply = await exchangeRaw(
        peer.url,
        rawPost(
          peer.url,
          utf7SmuggledBody(visible, 'evil'),
          Object.entries(headers),
          'application/json; charset=utf-7',
        ),
      );
      expect(reply.status).toBe(200);
      expect(peer.callCount('evil')).toBe(before + 1);
    },
  );

  it.each([
    ['echo', 'application/json; charset=utf-7'],
    ['ping', 'application/json; charset=UTF-7'],
    ['echo', 'application/json;charset="utf-7"'],
    ['echo', 'Application/JSON; Charset=utf-7'],
    ['ping', 'application/json; charset=utf-16'],
    ['echo', 'application/json; charset=iso-8859-1'],
  ] as const)(
    'refuses a body that reads as %s labelled %s: 415, -32600, nothing upstream',
    async (visible, contentType) => {
      const headers = await openRawSession(endpoint);
      const before = peer.requests.length;
      const evilBefore = peer.callCount('evil');
      const reply = await exchangeRaw(
        endpoint,
        rawPost(endpoint, utf7SmuggledBody(visible, 'evil'), Object.entries(headers), contentType),
      );
      expect(reply.status).toBe(415);
      expect(responsesIn(reply.body)).toEqual([
        expect.objectContaining({ jsonrpc: '2.0', error: expect.objectContaining({ code: -32600 }) }),
      ]);
      expect(peer.requests.slice(before)).toEqual([]);
      expect(peer.callCount('evil')).toBe(evilBefore);
    },
  );

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx'])(
    'refuses a POST labelled %s with 415 and forwards nothing',
    async (contentType) => {
      const headers = await openRawSession(endpoint);
      const before = peer.requests.length;
      const reply = await exchangeRaw(
        endpoint,
        rawPost(endpoint, '{"jsonrpc":"2.0","id":1,"method":"ping"}', Object.entries(headers), contentType),
      );
      expect(reply.status).toBe(415);
      expect(peer.requests.slice(before)).toEqual([]);
    },
  );

  it.each([
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    'Application/Json;charset=utf8',
  ])(
    'forwards the parsed call labelled %s (the UTF-8 reading is the one the upstream gets)',
    async (contentType) => {
      const headers = await openRawSession(endpoint);
      const before = peer.callCount('echo');
      const evilBefore = peer.callCount('evil');
      const reply = await exchangeRaw(
        endpoint,
        rawPost(endpoint, utf7SmuggledBody('echo', 'evil'), Object.entries(headers), contentType),
      );
      expect(reply.status).toBe(200);
      expect(peer.callCount('echo')).toBe(before + 1);
      expect(peer.callCount('evil')).toBe(evilBefore);
    },
  );
});
