import { createMcpHandler, InMemoryServerEventBus, Server } from '@modelcontextprotocol/server';
import type { Tool as V2Tool } from '@modelcontextprotocol/server';
import type { PeerHandle, PeerToolOptions } from './controls.js';
import { registryControls } from './controls.js';
import { listenOnLoopback } from './listen.js';
import { nodeFetchAdapter } from './nodeFetchAdapter.js';
import { paginate } from './paginate.js';
import { serveSurfacesV2, SURFACE_CAPABILITIES, type PeerSurfaces } from './surfaces.js';
import type { RecordedRequest } from './requestLog.js';
import { recordRequest } from './requestLog.js';
import { ToolRegistry } from './toolRegistry.js';

export interface V2ServerOptions extends PeerToolOptions {
  /**
   * How 2025-era (initialize-first) traffic is treated: `reject` (default) makes this a pure 2026-07-28
   * peer; `stateless` lets createMcpHandler's legacy fallback answer 2025 clients too.
   */
  legacy?: 'reject' | 'stateless';
}

function createV2LowLevelServer(
  registry: ToolRegistry,
  pageSize: number | undefined,
  surfaces: PeerSurfaces | undefined,
  serverInfo: (() => { name: string; version: string }) | undefined,
): Server {
  // The low-level Server is @deprecated in v2 (in favour of McpServer) but still exported; it keeps
  // this peer's tool definitions byte-for-byte what the registry holds.
  const server = new Server(
    serverInfo?.() ?? { name: 'toolpin-test-peer-v2', version: '2.0.0' },
    surfaces === undefined
      ? { capabilities: { tools: { listChanged: true } } }
      : { capabilities: SURFACE_CAPABILITIES, instructions: surfaces.instructions() },
  );
  if (surfaces !== undefined) serveSurfacesV2(server, surfaces);
  server.setRequestHandler('tools/list', (request) => {
    // The registry holds v1 `Tool`s; v2 types JSON Schema values more narrowly but the wire shape is the same.
    const tools = registry.list() as unknown as V2Tool[];
    const { page, nextCursor } = paginate(tools, request.params?.cursor, pageSize);
    return nextCursor === undefined ? { tools: page } : { tools: page, nextCursor };
  });
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const progressToken = request.params._meta?.progressToken;
    return registry.call(
      request.params.name,
      request.params.arguments ?? {},
      progressToken === undefined
        ? undefined
        : (progress, total) =>
            ctx.mcpReq.notify({
              method: 'notifications/progress',
              params: { progressToken, progress, total },
            }),
    );
  });
  return server;
}

/**
 * SDK v2 server speaking 2026-07-28 via `createMcpHandler` (stateless, a fresh Server per POST).
 * Drift publishes `tools_list_changed` on the handler's bus, delivered to open `subscriptions/listen` streams.
 */
export async function startV2Server(options: V2ServerOptions = {}): Promise<PeerHandle> {
  const registry = new ToolRegistry(options.tools);
  const requests: RecordedRequest[] = [];
  const bus = new InMemoryServerEventBus();
  const handler = createMcpHandler(
    () => createV2LowLevelServer(registry, options.pageSize, options.surfaces, options.serverInfo),
    {
      legacy: options.legacy ?? 'reject',
      bus,
      keepAliveMs: 0,
    },
  );
  registry.onListChanged = () => handler.notify.toolsChanged();
  if (options.surfaces !== undefined)
    options.surfaces.onListChanged = () => {
      handler.notify.promptsChanged();
      handler.notify.resourcesChanged();
    };

  const http = await listenOnLoopback(
    nodeFetchAdapter(handler.fetch, (req, body) => {
      let parsed: unknown;
      try {
        parsed = body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined;
      } catch {
        parsed = undefined;
      }
      recordRequest(
        requests,
        req.method ?? 'GET',
        (req.url ?? '/').split('?')[0] ?? '/',
        req.headers,
        parsed,
      );
    }),
  );
  return {
    url: `http://127.0.0.1:${http.port}/mcp`,
    requests,
    sessions: () => bus.listenerCount,
    ...registryControls(registry),
    async close() {
      await handler.close();
      await http.close();
    },
  };
}
