import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { RecordedRequest } from './requestLog.js';
import type { PeerSurfaces } from './surfaces.js';
import type { ToolRegistry } from './toolRegistry.js';

/** What every started peer returns. */
export interface PeerHandle {
  /** The endpoint a client connects to, e.g. http://127.0.0.1:<port>/mcp (or /sse for the legacy peer). */
  url: string;
  close(): Promise<void>;
  /** How many tools/call the upstream executed (for one tool, or in total). */
  callCount(name?: string): number;
  /** Replaces fields of one definition and announces `notifications/tools/list_changed`. */
  driftTool(name: string, patch: Partial<Tool>): void;
  addTool(tool: Tool): void;
  removeTool(name: string): void;
  /** Holds every `slow` call after its first progress step until the returned release is called. */
  holdSlowCalls(): () => void;
  /** Every JSON-RPC message received, in order, with its HTTP headers (live array). */
  requests: RecordedRequest[];
  /** Open sessions (v1 / legacy SSE) or open `subscriptions/listen` streams (v2). */
  sessions(): number;
}

/** Options shared by the SDK-based peers. */
export interface PeerToolOptions {
  /** tools/list page size (1 = one tool per page); default: no pagination. */
  pageSize?: number;
  /** Tool definitions to serve instead of the default echo/add/slow. */
  tools?: Tool[];
  /** Also serve a prompt, a resource template and instructions, which can drift (see PeerSurfaces). */
  surfaces?: PeerSurfaces;
  /**
   * The name and version the server states (initialize's `serverInfo`, server/discover's `_meta`),
   * read for each server instance (a session, or a request): a test changes it between pin and run.
   * @default the peer's own (`toolpin-test-peer-v1` 1.0.0, `toolpin-test-peer-v2` 2.0.0)
   */
  serverInfo?: () => { name: string; version: string };
}

export function registryControls(
  registry: ToolRegistry,
): Pick<PeerHandle, 'callCount' | 'driftTool' | 'addTool' | 'removeTool' | 'holdSlowCalls'> {
  return {
    callCount: (name) => registry.callCount(name),
    driftTool: (name, patch) => registry.drift(name, patch),
    addTool: (tool) => registry.add(tool),
    removeTool: (name) => registry.remove(name),
    holdSlowCalls: () => registry.holdSlowCalls(),
  };
}
