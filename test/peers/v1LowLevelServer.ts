import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { paginate } from './paginate.js';
import { serveSurfacesV1, SURFACE_CAPABILITIES, type PeerSurfaces } from './surfaces.js';
import type { ToolRegistry } from './toolRegistry.js';

/**
 * A v1 low-level `Server` (not McpServer) answering tools/list and tools/call from `registry`, and
 * with `surfaces` its prompts, resource templates and instructions; `serverInfo` names it.
 */
export function createV1LowLevelServer(
  registry: ToolRegistry,
  pageSize: number | undefined,
  surfaces?: PeerSurfaces,
  serverInfo?: () => { name: string; version: string },
): Server {
  const server = new Server(
    serverInfo?.() ?? { name: 'toolpin-test-peer-v1', version: '1.0.0' },
    surfaces === undefined
      ? { capabilities: { tools: { listChanged: true } } }
      : { capabilities: SURFACE_CAPABILITIES, instructions: surfaces.instructions() },
  );
  if (surfaces !== undefined) serveSurfacesV1(server, surfaces);
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const { page, nextCursor } = paginate(registry.list(), request.params?.cursor, pageSize);
    return nextCursor === undefined ? { tools: page } : { tools: page, nextCursor };
  });
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    return registry.call(
      request.params.name,
      request.params.arguments ?? {},
      progressToken === undefined
        ? undefined
        : (progress, total) =>
            extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress, total },
            }),
    );
  });
  return server;
}
