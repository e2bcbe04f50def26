import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { classifyAttemptFailure } from '../../src/transports/classifyAttemptFailure.js';

type Connect = (url: URL) => Promise<void>;

// Each SDK client connects for real and its own error is classified: the classes and fields differ per client.
const clients: Record<string, Connect> = {
  'v1 Streamable HTTP': async (url) => {
    const transport = new StreamableHTTPClientTransport(url);
    try {
      await new Client({ name: 't', version: '1' }).connect(transport, { timeout: 5000 });
    } finally {
      await transport.close();
    }
  },
  'v2 (2026-07-28 negotiation)': async (url) => {
    const client = new ClientV2({ name: 't', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    try {
      await client.connect(new StreamableHTTPClientTransportV2(url), { timeout: 5000 });
    } finally {
      await client.close();
    }
  },
  'v1 HTTP+SSE': async (url) => {
    const transport = new SSEClientTransport(url);
    try {
      await new Client({ name: 't', version: '1' }).connect(transport, { timeout: 5000 });
    } finally {
      await transport.close();
    }
  },
};

async function failureOf(connect: Connect, url: URL): Promise<unknown> {
  return connect(url).then(
    () => new Error('connected'),
    (error: unknown) => error,
  );
}

describe('classifyAttemptFailure', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    // The path names the status every request is answered with.
    server = createServer((req, res) => {
      res.writeHead(Number(req.url?.slice(1)), { 'content-type': 'text/plain' }).end('no');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  describe.each(Object.entries(clients))('the errors of the %s client', (_, connect) => {
    test.each([
      [400, 'refused'],
      [404, 'refused'],
      [405, 'refused'],
      [401, 'auth'],
      [403, 'auth'],
      [500, 'other'],
    ])('HTTP %i is %s', async (status, kind) => {
      const failure = classifyAttemptFailure(await failureOf(connect, new URL(`${base}/${status}`)));
      expect(failure).toMatchObject({ kind, status });
    });

    test('a closed port is a network failure, without a status', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const { port } = closed.address() as AddressInfo;
      await new Promise((resolve) => closed.close(resolve));
      const failure = classifyAttemptFailure(
        await failureOf(connect, new URL(`http://127.0.0.1:${port}/mcp`)),
      );
      expect(failure).toMatchObject({ kind: 'network', status: undefined });
    });
  });

  test('a JSON-RPC error code is not an HTTP status', () => {
    const error = Object.assign(new Error('Invalid request'), { code: 404 });
    expect(classifyAttemptFailure(error)).toMatchObject({ kind: 'other', status: undefined });
  });
});
