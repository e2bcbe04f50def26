import type { IncomingHttpHeaders } from 'node:http';
import { headerValue } from './httpHeaders.js';
import type { JsonRpcBody } from './jsonRpc.js';
import { decodeParamValue } from './paramHeaders.js';

/** The stateless revision: no initialize, no sessions, routing headers mirrored from the body. */
export const STATELESS_REVISION = '2026-07-28';

/** Which family of MCP revisions a request belongs to. */
export type McpEra = 'session' | 'stateless';

/** 2026-07-28 if the protocol-version header says so or the request carries `Mcp-Method`. */
export function detectEra(headers: IncomingHttpHeaders): McpEra {
  const version = headerValue(headers, 'mcp-protocol-version');
  if (version !== undefined) return version >= STATELESS_REVISION ? 'stateless' : 'session';
  return headerValue(headers, 'mcp-method') !== undefined ? 'stateless' : 'session';
}

/**
 * The body field each method's Mcp-Name mirrors (SEP-2243's table: `params.name` for tools/call and
 * prompts/get, `params.uri` for resources; `params.taskId` for the tasks binding of SEP-2663).
 */
function mirroredField(method: string): string | undefined {
  if (method === 'tools/call' || method === 'prompts/get') return 'name';
  if (method.startsWith('resources/')) return 'uri';
  if (method === 'tasks/get' || method === 'tasks/update' || method === 'tasks/cancel') return 'taskId';
  return undefined;
}

/** The name the routing header mirrors, as the body carries it (a string), or undefined. */
function mirroredName(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const field = mirroredField(method);
  const value = field === undefined || params === undefined ? undefined : params[field];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Checks that Mcp-Method / Mcp-Name agree with a single-message body (MCP 2026-07-28, SEP-2243):
 * an intermediary routes and authorizes on the headers while the server executes the body, so a
 * disagreement is a confused-deputy attempt. Returns the problem, or undefined when consistent.
 */
export function checkMirroredHeaders(headers: IncomingHttpHeaders, body: JsonRpcBody): string | undefined {
  const method = headerValue(headers, 'mcp-method');
  const name = headerValue(headers, 'mcp-name');
  if (method === undefined && name === undefined) return undefined;
  if (body.batch) return 'Mcp-Method/Mcp-Name headers cannot describe a batch';
  const message = body.messages[0];
  if (message === undefined || !('method' in message)) {
    return method === undefined ? undefined : 'Mcp-Method header on a message that is not a request';
  }
  if (method !== undefined && method !== message.method) {
    return `Mcp-Method header "${method}" does not match body method "${message.method}"`;
  }
  const bodyName = mirroredName(message.method, message.params);
  // A name that cannot ride in a header as it is comes in the Base64 sentinel; a server decodes it.
  const headerName = name === undefined ? undefined : decodeParamValue(name);
  if (name !== undefined && headerName === undefined)
    return 'Mcp-Name header is not canonical Base64 of UTF-8 in its =?base64?…?= sentinel';
  if (name !== undefined && headerName !== bodyName) {
    return `Mcp-Name header "${name}" does not match body name "${bodyName ?? '(none)'}"`;
  }
  if (
    name === undefined &&
    bodyName !== undefined &&
    message.method === 'tools/call' &&
    method !== undefined
  ) {
    return 'Mcp-Name header missing for tools/call';
  }
  return undefined;
}

/**
 * `_meta` keys that identify the client's own request rather than the client: reusing them on the
 * gateway's tools/list would tie it to the client's call (a progress token must be unique among
 * active requests; a related task belongs to one request).
 */
const PER_REQUEST_META = new Set(['progressToken', 'io.modelcontextprotocol/related-task']);

/**
 * The `_meta` of a request the gateway sends itself on a client's behalf (fetch on miss): the
 * client's minus its per-request keys, so the 2026-07-28 envelope (version, info, capabilities) stays.
 */
export function listingMeta(meta: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(meta).filter(([key]) => !PER_REQUEST_META.has(key)));
}
