// The benchmark's upstream, run as its own process: a real SDK v1 MCP server (the low-level
// `Server`, which hands out a prebuilt tools array; McpServer rebuilds schemas on every list)
// over StreamableHTTPServerTransport on 127.0.0.1.
//   stateful:  Mcp-Session-Id sessions, answers as SSE streams
//   stateless: no sessions, JSON answers, a fresh Server + transport per request (as the SDK requires)
// Usage: node --import tsx bench/upstream.ts <stateful|stateless> <tools>
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ECHO_TOOL, makeCatalog } from './catalog.js';
import { serveChild } from './serveChild.js';

const mode = process.argv[2];
const size = Number(process.argv[3]);
if ((mode !== 'stateful' && mode !== 'stateless') || !Number.isInteger(size) || size < 1) {
  process.stderr.write('usage: upstream.ts <stateful|stateless> <tools>\n');
  process.exit(2);
}
const tools = makeCatalog(size) as Tool[];

function createMcpServer(): Server {
  const server = new Server(
    { name: 'toolpin-bench-upstream', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const args = request.params.arguments ?? {};
    const text =
      request.params.name === ECHO_TOOL ? String(args.text ?? '') : `${request.params.name} called`;
    return { content: [{ type: 'text', text }] };
  });
  return server;
}

function reject(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
}

/** Reads a POST body as JSON (the transport accepts a pre-parsed body; initialize must be recognized). */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const sessions = new Map<string, StreamableHTTPServerTransport>();

async function handleStateful(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const id = req.headers['mcp-session-id'];
  if (typeof id === 'string') {
    const transport = sessions.get(id);
    if (transport === undefined) return reject(res, 404, 'Session not found');
    return transport.handleRequest(req, res, req.method === 'POST' ? await readJson(req) : undefined);
  }
  if (req.method !== 'POST') return reject(res, 400, 'No session id');
  const body = await readJson(req);
  if ((body as { method?: unknown }).method !== 'initialize') return reject(res, 400, 'No session id');
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
    onsessionclosed: (sessionId) => void sessions.delete(sessionId),
  });
  await createMcpServer().connect(transport);
  await transport.handleRequest(req, res, body);
}

async function handleStateless(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') return reject(res, 405, 'Method not allowed');
  const server = createMcpServer();
  // No sessionIdGenerator: stateless.
  const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, await readJson(req));
}

const http = createServer((req, res) => {
  const handle = mode === 'stateful' ? handleStateful : handleStateless;
  handle(req, res).catch((error: Error) => {
    if (!res.headersSent) reject(res, 500, error.message);
    else res.destroy();
  });
});
serveChild(http, 'upstream');
