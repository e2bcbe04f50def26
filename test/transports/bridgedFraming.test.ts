import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { sendRawHttp, type RawHttpAnswer } from '../support/rawHttpClient.js';
import { callRequest, initializeRequest, openRawSession, postRaw } from '../support/rawMcp.js';
import { fixtureCommand, listStdioCatalog, stdioPinFor } from './support.js';

// The client-side request rules of the boundary (docs/boundary.md) hold on the bridged fronts too:
// the stdio route's own Streamable HTTP endpoint (session and 2026-07-28 clients) and the legacy
// HTTP+SSE paths. Requests are written as exact bytes by a raw client.

function expectRefusal(answer: RawHttpAnswer, status: number): void {
  expect(answer.status).toBe(status);
  expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
}

describe('bridged fronts: request framing', () => {
  let dir: string;
  let callLog: string;
  let gateway: GatewayHarness;
  let pinned: Tool[];
  let host: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-bridged-framing-'));
    callLog = join(dir, 'calls.log');
    pinned = await listStdioCatalog(fixtureCommand());
    gateway = await startGatewayHarness([
      stdioPinFor('local', fixtureCommand(), pinned, { TOOLPIN_FIXTURE_CALL_LOG: callLog }),
    ]);
    host = new URL(gateway.url).host;
  });

  afterAll(async () => {
    await gateway?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function executedCalls(): Promise<string[]> {
    return (await readFile(callLog, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');
  }

  it.each(['OPTIONS', 'PUT', 'PATCH', 'HEAD'])('answers %s on /mcp with 405 and Allow', async (method) => {
    const answer = await sendRawHttp(
      gateway.url,
      `${method} /local/mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, POST, DELETE');
    // HEAD has no body by definition; the others carry the JSON-RPC refusal.
    if (method !== 'HEAD') expectRefusal(answer, 405);
  });

  it('refuses a GET carrying a chunked body (a tools/call inside) with 400 and closes the connection', async () => {
    const before = await executedCalls();
    const session = await openRawSession(`${gateway.url}/local/mcp`);
    const smuggled = JSON.stringify(callRequest('smuggled', 'echo', { text: 'smuggled' }));
    const chunk = `${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`;
    const answer = await sendRawHttp(
      gateway.url,
      `GET /local/mcp HTTP/1.1\r\nHost: ${host}\r\nAccept: text/event-stream\r\n` +
        `Mcp-Session-Id: ${session['mcp-session-id']}\r\nMcp-Protocol-Version: 2025-06-18\r\n` +
        `Transfer-Encoding: chunked\r\n\r\n${chunk}`,
    );
    expectRefusal(answer, 400);
    expect(answer.headers.connection).toBe('close');
    expect(await executedCalls()).toEqual(before);
  });

  it('refuses a DELETE whose Content-Length the Connection header names with 400; the session lives on', async () => {
    const url = `${gateway.url}/local/mcp`;
    const session = await openRawSession(url);
    const body = '{"x":1}';
    const answer = await sendRawHttp(
      gateway.url,
      `DELETE /local/mcp HTTP/1.1\r\nHost: ${host}\r\nMcp-Session-Id: ${session['mcp-session-id']}\r\n` +
        `Connection: keep-alive, Content-Length\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expectRefusal(answer, 400);
    const echoed = await postRaw(url, callRequest('after', 'echo', { text: 'alive' }), session);
    expect(echoed.messages[0]).toMatchObject({ result: { content: [{ type: 'text', text: 'alive' }] } });
  });

  it.each([
    ['charset=utf-7', 'application/json; charset=utf-7'],
    ['charset=UTF-16', 'Application/JSON; Charset="UTF-16"'],
    ['text/plain', 'text/plain'],
  ])('refuses a POST in %s with 415 before a child is spawned', async (_label, type) => {
    const opened = gateway.events('session.opened').length;
    const body = JSON.stringify(initializeRequest('init-415'));
    const answer = await sendRawHttp(
      gateway.url,
      `POST /local/mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${type}\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
    expectRefusal(answer, 415);
    expect(gateway.events('session.opened')).toHaveLength(opened);
  });

  it('accepts media type and charset in any case (RFC 9110): Application/JSON; charset=UTF-8', async () => {
    const body = JSON.stringify(initializeRequest('init-case'));
    const answer = await sendRawHttp(
      gateway.url,
      `POST /local/mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: Application/JSON; charset=UTF-8\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['mcp-session-id']).toBeDefined();
  });

  it('applies the rules to the legacy HTTP+SSE paths: 405 with Allow, 400, 415', async () => {
    const before = await executedCalls();
    const sse = await sendRawHttp(
      gateway.url,
      `PUT /local/sse HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    expectRefusal(sse, 405);
    expect(sse.headers.allow).toBe('GET');
    const messages = await sendRawHttp(
      gateway.url,
      `GET /local/messages?sessionId=x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    );
    expectRefusal(messages, 405);
    expect(messages.headers.allow).toBe('POST');
    const withBody = await sendRawHttp(
      gateway.url,
      `GET /local/sse HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expectRefusal(withBody, 400);
    const body = JSON.stringify(callRequest('c', 'echo', { text: 'x' }));
    const utf7 = await sendRawHttp(
      gateway.url,
      `POST /local/messages?sessionId=x HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json; charset=utf-7\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expectRefusal(utf7, 415);
    expect(await executedCalls()).toEqual(before);
  });
});
