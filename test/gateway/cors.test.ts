import { defaultTools } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { sendRawHttp, type RawHttpAnswer } from '../support/rawHttpClient.js';
import { answerHandshake, answerJson, startRawUpstream, type RawUpstream } from '../support/rawUpstream.js';
import { fixtureCommand, listStdioCatalog, stdioPinFor } from '../transports/support.js';

const ALLOWED = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } },
});

function accessControl(answer: RawHttpAnswer): Record<string, string> {
  return Object.fromEntries(
    Object.entries(answer.headers).filter(([name]) => name.startsWith('access-control-')),
  );
}

function host(url: string): string {
  return new URL(url).host;
}

/** A browser's preflight before a POST with MCP's headers, as exact bytes. */
function preflight(url: string, origin: string): string {
  return (
    `OPTIONS /demo/mcp HTTP/1.1\r\nHost: ${host(url)}\r\nOrigin: ${origin}\r\n` +
    'Access-Control-Request-Method: POST\r\n' +
    'Access-Control-Request-Headers: content-type, mcp-protocol-version, mcp-session-id, mcp-method, authorization\r\n' +
    'Connection: close\r\n\r\n'
  );
}

/** A POST of `initialize`, from `origin` (none: not a browser), with `extra` header lines. */
function post(url: string, origin: string | undefined, extra = ''): string {
  return (
    `POST /demo/mcp HTTP/1.1\r\nHost: ${host(url)}\r\n` +
    (origin === undefined ? '' : `Origin: ${origin}\r\n`) +
    'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
    `${extra}Content-Length: ${Buffer.byteLength(INITIALIZE)}\r\nConnection: close\r\n\r\n${INITIALIZE}`
  );
}

describe('browser clients (the cors block)', () => {
  let upstream: RawUpstream;
  let gateway: GatewayHarness;

  beforeAll(async () => {
    // An upstream with CORS headers of its own (wider than the gateway's), a session id, and a
    // 401 challenge for a request without credentials.
    upstream = await startRawUpstream((exchange) => {
      const own = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'x-upstream' };
      if (exchange.req.headers.authorization === undefined) {
        answerJson(exchange.res, { error: 'unauthorized' }, 401, {
          ...own,
          'www-authenticate': 'Bearer resource_metadata="https://auth.example.com/.well-known/oauth"',
        });
        return;
      }
      if (answerHandshake(exchange)) return;
      answerJson(exchange.res, { jsonrpc: '2.0', id: null, error: { code: -32601, message: 'no' } });
    });
    gateway = await startGatewayHarness([pinFor('demo', upstream.url, defaultTools())], {
      cors: { origins: [ALLOWED], credentials: true, maxAgeSeconds: 120 },
    });
  });

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('answers a preflight from an allowed origin 204 with the Access-Control headers, without reaching the upstream', async () => {
    const before = upstream.requests.length;
    const answer = await sendRawHttp(gateway.url, preflight(gateway.url, ALLOWED));
    expect(answer.status).toBe(204);
    expect(answer.body).toBe('');
    expect(accessControl(answer)).toEqual({
      'access-control-allow-origin': ALLOWED,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, POST, DELETE',
      'access-control-allow-headers':
        'Content-Type,Accept,Authorization,Mcp-Session-Id,MCP-Protocol-Version,Last-Event-ID,Mcp-Method,Mcp-Name',
      'access-control-expose-headers': 'Mcp-Session-Id,MCP-Protocol-Version,WWW-Authenticate',
      'access-control-max-age': '120',
    });
    expect(answer.headers.vary).toContain('Origin');
    expect(upstream.requests.length).toBe(before);
  });

  it("marks an allowed origin's answers readable (Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate exposed); the upstream's own CORS headers are dropped", async () => {
    const answer = await sendRawHttp(
      gateway.url,
      post(gateway.url, ALLOWED, 'Authorization: Bearer t0ken\r\n'),
    );
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.body) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(
      '2025-06-18',
    );
    expect(accessControl(answer)).toEqual({
      'access-control-allow-origin': ALLOWED,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': 'Mcp-Session-Id,MCP-Protocol-Version,WWW-Authenticate',
    });
  });

  it("carries the CORS headers on the upstream's 401, so a browser can read its WWW-Authenticate", async () => {
    const answer = await sendRawHttp(gateway.url, post(gateway.url, ALLOWED));
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toContain('resource_metadata=');
    expect(answer.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(answer.headers['access-control-expose-headers']).toContain('WWW-Authenticate');
  });

  it('refuses a preflight and a request from another origin 403, without CORS headers, and logs it', async () => {
    const before = upstream.requests.length;
    const refusedPreflight = await sendRawHttp(gateway.url, preflight(gateway.url, OTHER));
    const refusedPost = await sendRawHttp(
      gateway.url,
      post(gateway.url, OTHER, 'Authorization: Bearer t0ken\r\n'),
    );
    for (const answer of [refusedPreflight, refusedPost]) {
      expect(answer.status).toBe(403);
      expect(accessControl(answer)).toEqual({});
      expect(JSON.parse(answer.body)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: `Forbidden: origin "${OTHER}" is not in the gateway's cors.origins`,
        },
      });
    }
    expect(upstream.requests.length).toBe(before);
    expect(gateway.events('request.rejected')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ method: 'OPTIONS', origin: OTHER, status: 403 }),
        expect.objectContaining({ method: 'POST', origin: OTHER, status: 403 }),
      ]),
    );
  });

  it('leaves an OPTIONS that is no preflight to the boundary (405), and a request without Origin untouched', async () => {
    const options = await sendRawHttp(
      gateway.url,
      `OPTIONS /demo/mcp HTTP/1.1\r\nHost: ${host(gateway.url)}\r\nOrigin: ${ALLOWED}\r\nConnection: close\r\n\r\n`,
    );
    expect(options.status).toBe(405);
    expect(options.headers.allow).toBe('GET, POST, DELETE');
    const plain = await sendRawHttp(
      gateway.url,
      post(gateway.url, undefined, 'Authorization: Bearer t0ken\r\n'),
    );
    expect(plain.status).toBe(200);
    expect(accessControl(plain)).toEqual({});
  });
});

describe('browser clients of a bridged (stdio) route', () => {
  it("marks the bridged front's answers for an allowed origin too, the session id readable", async () => {
    const tools = await listStdioCatalog(fixtureCommand());
    const gateway = await startGatewayHarness([stdioPinFor('demo', fixtureCommand(), tools)], {
      cors: { origins: [ALLOWED] },
    });
    try {
      const answer = await sendRawHttp(gateway.url, post(gateway.url, ALLOWED), 20_000);
      expect(answer.status).toBe(200);
      expect(answer.headers['mcp-session-id']).toMatch(/./);
      expect(accessControl(answer)).toEqual({
        'access-control-allow-origin': ALLOWED,
        'access-control-expose-headers': 'Mcp-Session-Id,MCP-Protocol-Version,WWW-Authenticate',
      });
    } finally {
      await gateway.close();
    }
  }, 30_000);
});

describe('without a cors block (the default)', () => {
  it('answers a preflight 405 with no CORS headers; refuses a non-loopback Origin 403 (DNS rebinding)', async () => {
    const upstream = await startRawUpstream((exchange) => {
      answerJson(exchange.res, {}, 500);
    });
    const gateway = await startGatewayHarness([pinFor('demo', upstream.url, defaultTools())]);
    try {
      const answer = await sendRawHttp(gateway.url, preflight(gateway.url, ALLOWED));
      expect(answer.status).toBe(405);
      expect(accessControl(answer)).toEqual({});
      expect(upstream.requests).toEqual([]);
      // Red team: DNS rebinding. A page of evil.example.net whose name now resolves to 127.0.0.1 is
      // same-origin in the browser's eyes (no preflight) and its POST carries its own Origin: the
      // MCP transport asks servers to validate Origin, and without a cors block nothing did.
      for (const origin of [
        OTHER,
        'http://evil.example.net:8080',
        'null',
        'http://127.0.0.1.evil.example.net',
      ]) {
        const rebound = await sendRawHttp(gateway.url, post(gateway.url, origin));
        expect(rebound.status).toBe(403);
        expect(rebound.body).toContain('cors');
      }
      expect(upstream.requests).toEqual([]);
      // A loopback origin (a local browser tool such as an inspector) and no Origin are served.
      for (const origin of [
        'http://localhost:5173',
        'http://127.0.0.1:6274',
        'http://[::1]:3000',
        undefined,
      ]) {
        const served = await sendRawHttp(gateway.url, post(gateway.url, origin));
        expect(served.status).not.toBe(403);
      }
      expect(upstream.requests).toHaveLength(4);
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});
