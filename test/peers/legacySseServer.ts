import express from 'express';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { PeerHandle, PeerToolOptions } from './controls.js';
import { registryControls } from './controls.js';
import { listenOnLoopback } from './listen.js';
import type { RecordedRequest } from './requestLog.js';
import { recordRequest } from './requestLog.js';
import { ToolRegistry } from './toolRegistry.js';
import { createV1LowLevelServer } from './v1LowLevelServer.js';

export type LegacySseServerOptions = PeerToolOptions;

/**
 * SDK v1 low-level Server over the deprecated 2024-11-05 HTTP+SSE transport:
 * GET /sse opens the stream (first event: `endpoint` → /messages?sessionId=…), POST /messages carries requests.
 */
export async function startLegacySseServer(options: LegacySseServerOptions = {}): Promise<PeerHandle> {
  const registry = new ToolRegistry(options.tools);
  const requests: RecordedRequest[] = [];
  const sessions = new Map<string, { transport: SSEServerTransport; server: Server }>();
  registry.onListChanged = () => {
    for (const { server } of sessions.values()) void server.sendToolListChanged().catch(() => {});
  };

  const app = express();
  app.use(express.json());
  app.use((req, _res, next) => {
    recordRequest(requests, req.method, req.path, req.headers, req.method === 'POST' ? req.body : undefined);
    next();
  });
  app.get('/sse', async (_req, res) => {
    const transport = new SSEServerTransport('/messages', res);
    const server = createV1LowLevelServer(registry, options.pageSize, undefined, options.serverInfo);
    sessions.set(transport.sessionId, { transport, server });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await server.connect(transport);
  });
  app.post('/messages', async (req, res) => {
    const session = sessions.get(String(req.query['sessionId'] ?? ''));
    if (session === undefined) {
      res.status(404).send('Session not found');
      return;
    }
    await session.transport.handlePostMessage(req, res, req.body);
  });

  const http = await listenOnLoopback(app);
  return {
    url: `http://127.0.0.1:${http.port}/sse`,
    requests,
    sessions: () => sessions.size,
    ...registryControls(registry),
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(all.flatMap(({ transport, server }) => [transport.close(), server.close()]));
      await http.close();
    },
  };
}
