import type { ServerResponse } from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectSseClient } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import {
  answerHandshake,
  answerJsonText,
  messageOf,
  startRawUpstream,
  type RawUpstream,
} from '../support/rawUpstream.js';
import { RAW_DRIFTED_ECHO, RAW_ECHO } from './support.js';

// A Streamable HTTP upstream reached through the bridge (here: behind the legacy HTTP+SSE front),
// raw (node:http, exact bytes). The SDK's client transport reads what the gateway parsed and
// checked (transports/checkedFetch.ts): an invalid answer becomes -32042 for its request instead of
// vanishing in the SDK's schema, and a redirect is never followed.

const ECHO = RAW_ECHO;
const DRIFTED = RAW_DRIFTED_ECHO;

/** How the raw upstream answers tools/list. */
type Answer = 'json-error-null' | 'sse-error-null' | 'sse-leading-space' | 'redirect' | 'clean';

function answerList(res: ServerResponse, id: unknown, answer: Answer): void {
  const idText = JSON.stringify(id);
  const drifted = `{"tools":[${JSON.stringify(DRIFTED)}]}`;
  switch (answer) {
    case 'json-error-null':
      return answerJsonText(res, `{"jsonrpc":"2.0","id":${idText},"result":${drifted},"error":null}`);
    case 'sse-error-null':
      res.writeHead(200, { 'content-type': 'Text/Event-Stream' });
      res.end(`event: message\ndata: {"jsonrpc":"2.0","id":${idText},"result":${drifted},"error":null}\n\n`);
      return;
    case 'sse-leading-space':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data:  {"jsonrpc":"2.0","id":${idText},"result":${drifted}}\n\n`);
      return;
    case 'redirect':
      res.writeHead(307, { location: '/elsewhere' }).end();
      return;
    default:
      return answerJsonText(
        res,
        `{"jsonrpc":"2.0","id":${idText},"result":{"tools":[${JSON.stringify(ECHO)}]}}`,
      );
  }
}

describe('a raw Streamable HTTP upstream behind the bridge (legacy HTTP+SSE front)', () => {
  let answer: Answer;
  let upstream: RawUpstream;
  let gateway: GatewayHarness;
  const clients: Client[] = [];

  beforeAll(async () => {
    upstream = await startRawUpstream((exchange) => {
      if (answerHandshake(exchange)) return;
      const message = messageOf(exchange.body);
      if (message.method === 'tools/list') return answerList(exchange.res, message.id, answer);
      answerJsonText(
        exchange.res,
        `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text","text":"executed"}]}}`,
      );
    });
    gateway = await startGatewayHarness([pinFor('stream', upstream.url, [ECHO])]);
  });

  afterAll(async () => {
    for (const client of clients.splice(0)) await client.close();
    await gateway?.close();
    await upstream?.close();
  });

  async function connect(): Promise<Client> {
    const client = await connectSseClient(`${gateway.url}/stream/sse`);
    clients.push(client);
    return client;
  }

  async function listFailure(client: Client): Promise<unknown> {
    return client.listTools().then(
      (listed) => listed,
      (error: unknown) => error,
    );
  }

  it('lists the pinned tool when the upstream answers cleanly (the baseline)', async () => {
    answer = 'clean';
    const client = await connect();
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
  });

  it.each<[Answer, string]>([
    ['json-error-null', 'a JSON answer'],
    ['sse-error-null', 'an SSE answer labelled Text/Event-Stream'],
  ])('refuses %s ("error": null beside a drifted listing, %s) with -32042', async (kind) => {
    answer = kind;
    const client = await connect();
    expect(await listFailure(client)).toMatchObject({
      code: -32042,
      data: { reason: 'invalid_message', server: 'stream' },
    });
    expect(gateway.events('upstream.invalid_message')).toContainEqual(
      expect.objectContaining({ server: 'stream', reason: 'invalid_message', answered: true }),
    );
  });

  it('inspects SSE data that starts with a space: the drifted tool is hidden', async () => {
    answer = 'sse-leading-space';
    const client = await connect();
    expect((await client.listTools()).tools).toEqual([]);
  });

  it('never follows a redirect: -32042 redirect for the request', async () => {
    answer = 'redirect';
    const before = upstream.requests.length;
    const client = await connect();
    expect(await listFailure(client)).toMatchObject({ code: -32042, data: { reason: 'redirect' } });
    // Followed, the 307 would have repeated the POST: the upstream saw the listing once.
    const listings = upstream.requests
      .slice(before)
      .filter((request) => messageOf(request.body).method === 'tools/list');
    expect(listings).toHaveLength(1);
  });
});
