import express, { type Request, type Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { listenOnLoopback } from '../peers/listen.js';
import { ToolRegistry } from '../peers/toolRegistry.js';
import { createV1LowLevelServer } from '../peers/v1LowLevelServer.js';

/** An upstream whose catalog depends on the bearer token of each request (2026-07-28: by authorization). */
export interface PerTokenServer {
  readonly url: string;
  /** How many calls of `tool` the upstream executed for `token`. */
  callCount(token: string, tool: string): number;
  close(): Promise<void>;
}

/**
 * An SDK v1 server over stateless Streamable HTTP (JSON answers) on 127.0.0.1 that lists and
 * calls the catalog of the request's `Authorization: Bearer <token>`; any other request is 401.
 */
export async function startPerTokenServer(catalogs: Record<string, Tool[]>): Promise<PerTokenServer> {
  const registries = new Map(
    Object.entries(catalogs).map(([token, tools]) => [token, new ToolRegistry(tools)]),
  );
  const app = express();
  app.use(express.json());
  app.post('/mcp', async (req: Request, res: Response) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const registry = token === undefined ? undefined : registries.get(token);
    if (registry === undefined)
      return void res
        .status(401)
        .json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized' } });
    const server = createV1LowLevelServer(registry, undefined);
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.all('/mcp', (_req, res) => void res.status(405).end());
  const listening = await listenOnLoopback(app);
  return {
    url: `http://127.0.0.1:${listening.port}/mcp`,
    callCount: (token, tool) => registries.get(token)?.callCount(tool) ?? 0,
    close: () => listening.close(),
  };
}
