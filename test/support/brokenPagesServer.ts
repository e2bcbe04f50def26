import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A raw MCP endpoint whose tools/list first page is fine and whose second page fails. */
export interface BrokenPagesServer {
  readonly url: string;
  /** tools/list requests received, by cursor (`null` for the first page). */
  readonly listed: (string | null)[];
  close(): Promise<void>;
}

const FIRST_PAGE_TOOL = {
  name: 'echo',
  description: 'Echoes the given text back unchanged.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

function reply(res: ServerResponse, status: number, body?: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * Stateless JSON over Streamable HTTP, written by hand so the failure is exact: initialize and
 * the first tools/list page succeed (with a nextCursor); the page it points to answers a
 * JSON-RPC error, as a server that lost its page store would.
 */
export async function startBrokenPagesServer(): Promise<BrokenPagesServer> {
  const listed: (string | null)[] = [];
  const server = createServer((req, res) => {
    if (req.method !== 'POST')
      return reply(res, 405, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Method not allowed.' },
      });
    readJson(req).then(
      (message) => {
        const id = message.id;
        const params = (message.params ?? {}) as Record<string, unknown>;
        if (id === undefined) return reply(res, 202);
        if (message.method === 'initialize') {
          return reply(res, 200, {
            jsonrpc: '2.0',
            id,
            result: {
              protocolVersion: params.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: 'broken-pages', version: '1.0.0' },
            },
          });
        }
        if (message.method === 'tools/list') {
          const cursor = typeof params.cursor === 'string' ? params.cursor : null;
          listed.push(cursor);
          if (cursor === null)
            return reply(res, 200, {
              jsonrpc: '2.0',
              id,
              result: { tools: [FIRST_PAGE_TOOL], nextCursor: 'page-2' },
            });
          return reply(res, 200, { jsonrpc: '2.0', id, error: { code: -32603, message: 'page store lost' } });
        }
        return reply(res, 200, { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
      },
      () => reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    listed,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
