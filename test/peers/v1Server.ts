import { randomUUID } from 'node:crypto';
import express from 'express';
import type { Request, Response } from 'express';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { PeerHandle, PeerToolOptions } from './controls.js';
import { registryControls } from './controls.js';
import { listenOnLoopback } from './listen.js';
import type { RecordedRequest } from './requestLog.js';
import { recordRequest } from './requestLog.js';
import { ToolRegistry } from './toolRegistry.js';
import { createV1LowLevelServer } from './v1LowLevelServer.js';

export interface V1ServerOptions extends PeerToolOptions {
  /**
   * `stateful-sse`: Mcp-Session-Id sessions, SSE responses, GET stream, DELETE, resumable via an event store.
   * `stateless-json`: no sessions, plain JSON responses, a fresh Server + transport per request.
   */
  mode: 'stateful-sse' | 'stateless-json';
  /**
   * When set, a request without exactly this `Authorization` value is answered 401 with a Basic
   * challenge (after being recorded), as a server behind HTTP authentication would.
   */
  authorization?: string;
  /**
   * When set, each request's `Authorization` is judged by it (after being recorded): false answers
   * 401 with the upstream's own Bearer challenge, as an OAuth-protected server would.
   */
  authorize?: (authorization: string | undefined) => Promise<boolean>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
}

function jsonRpcError(res: Response, status: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/** SDK v1 low-level Server over StreamableHTTPServerTransport behind express, on 127.0.0.1:0. */
export async function startV1Server(options: V1ServerOptions): Promise<PeerHandle> {
  const registry = new ToolRegistry(options.tools);
  const requests: RecordedRequest[] = [];
  const sessions = new Map<string, Session>();
  const stateless = new Set<Session>();

  registry.onListChanged = () => {
    for (const { server } of sessions.values()) void server.sendToolListChanged().catch(() => {});
  };
  if (options.surfaces !== undefined)
    options.surfaces.onListChanged = () => {
      for (const { server } of sessions.values()) {
        void server.sendPromptListChanged().catch(() => {});
        void server.sendResourceListChanged().catch(() => {});
      }
    };

  const app = express();
  app.use(express.json());
  app.use((req, _res, next) => {
    recordRequest(requests, req.method, req.path, req.headers, req.method === 'POST' ? req.body : undefined);
    next();
  });
  if (options.authorization !== undefined) {
    const expected = options.authorization;
    app.use((req, res, next) => {
      if (req.headers.authorization === expected) return next();
      res.setHeader('www-authenticate', 'Basic realm="mcp"');
      jsonRpcError(res, 401, 'Unauthorized');
    });
  }

  if (options.authorize !== undefined) {
    const authorize = options.authorize;
    app.use((req, res, next) => {
      void authorize(req.headers.authorization).then((ok) => {
        if (ok) return next();
        res.setHeader(
          'www-authenticate',
          `Bearer error="invalid_token", resource_metadata="http://${req.headers.host}/.well-known/oauth-protected-resource/mcp"`,
        );
        jsonRpcError(res, 401, 'Unauthorized');
      });
    });
  }

  if (options.mode === 'stateless-json') {
    app.post('/mcp', async (req: Request, res: Response) => {
      const session: Session = {
        server: createV1LowLevelServer(registry, options.pageSize, options.surfaces, options.serverInfo),
        // sessionIdGenerator omitted (= undefined): stateless mode
        transport: new StreamableHTTPServerTransport({ enableJsonResponse: true }),
      };
      stateless.add(session);
      res.on('close', () => {
        stateless.delete(session);
        void session.transport.close();
        void session.server.close();
      });
      await session.server.connect(session.transport);
      await session.transport.handleRequest(req, res, req.body);
    });
    app.all('/mcp', (_req, res) => jsonRpcError(res, 405, 'Method not allowed.'));
  } else {
    app.post('/mcp', async (req: Request, res: Response) => {
      const sessionId = req.header('mcp-session-id');
      if (sessionId !== undefined) {
        const session = sessions.get(sessionId);
        if (session === undefined) return jsonRpcError(res, 404, 'Session not found');
        return session.transport.handleRequest(req, res, req.body);
      }
      if (!isInitializeRequest(req.body)) return jsonRpcError(res, 400, 'Bad Request: no session id');
      const server = createV1LowLevelServer(registry, options.pageSize, options.surfaces, options.serverInfo);
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new InMemoryEventStore(),
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, server });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
    const existing = async (req: Request, res: Response) => {
      const sessionId = req.header('mcp-session-id');
      const session = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (session === undefined)
        return jsonRpcError(res, sessionId === undefined ? 400 : 404, 'Session not found');
      await session.transport.handleRequest(req, res);
    };
    app.get('/mcp', existing);
    app.delete('/mcp', existing);
  }

  const http = await listenOnLoopback(app);
  return {
    url: `http://127.0.0.1:${http.port}/mcp`,
    requests,
    sessions: () => sessions.size,
    ...registryControls(registry),
    async close() {
      const all = [...sessions.values(), ...stateless];
      sessions.clear();
      stateless.clear();
      await Promise.allSettled(all.flatMap(({ transport, server }) => [transport.close(), server.close()]));
      await http.close();
    },
  };
}
