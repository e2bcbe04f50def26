/** One HTTP exchange with an MCP endpoint, with the JSON-RPC messages of its body (JSON or SSE). */
export interface RawReply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The JSON body, or each SSE event's parsed data, in order (a JSON array body stays one value). */
  readonly messages: unknown[];
}

/** Parses a reply body: JSON → one value, SSE → one value per event with JSON data. */
export function parseReplyBody(type: string, text: string): unknown[] {
  if (text === '') return [];
  if (!type.includes('text/event-stream')) return [JSON.parse(text) as unknown];
  return parseSseEvents(text)
    .map((event) => event.data)
    .filter((data) => data.startsWith('{') || data.startsWith('['))
    .map((data) => JSON.parse(data) as unknown);
}

/** One SSE event as a client sees it. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/** A small SSE parser for complete bodies (the gateway's own parser is what is under test). */
export function parseSseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    const data: string[] = [];
    const event: SseEvent = { data: '' };
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon === 0 || line === '') continue;
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'id') event.id = value;
      else if (field === 'event') event.event = value;
    }
    if (data.length === 0) continue;
    event.data = data.join('\n');
    events.push(event);
  }
  return events;
}

/** POSTs a JSON-RPC body (object, array or raw text) and reads the whole reply. */
export async function postRaw(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawReply> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let messages: unknown[];
  try {
    messages = parseReplyBody(response.headers.get('content-type') ?? '', text);
  } catch {
    messages = [];
  }
  return { status: response.status, headers: response.headers, text, messages };
}

/**
 * The 2026-07-28 envelope a raw stateless request carries in `params._meta`: revision, client info
 * (named `clientName`) and no capabilities.
 */
export function statelessEnvelope(clientName = 'raw-2026-client'): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: clientName, version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
}

/** A 2025-era initialize request with this id. */
export function initializeRequest(
  id: string | number = 'init-1',
  protocolVersion = '2025-06-18',
): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-test-client', version: '1.0.0' } },
  };
}

/** Initializes a 2025-era session with raw HTTP; returns the headers later requests of the session carry. */
export async function openRawSession(
  url: string,
  headers: Record<string, string> = {},
  protocolVersion = '2025-06-18',
): Promise<Record<string, string>> {
  const reply = await postRaw(url, initializeRequest('init-1', protocolVersion), headers);
  if (reply.status !== 200) throw new Error(`initialize answered HTTP ${reply.status}: ${reply.text}`);
  const session = reply.headers.get('mcp-session-id');
  const sessionHeaders: Record<string, string> = { ...headers, 'mcp-protocol-version': protocolVersion };
  if (session !== null) sessionHeaders['mcp-session-id'] = session;
  const initialized = await postRaw(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    sessionHeaders,
  );
  if (initialized.status !== 202)
    throw new Error(`notifications/initialized answered HTTP ${initialized.status}`);
  return sessionHeaders;
}

/** A tools/call request. */
export function callRequest(
  id: string | number,
  name: string,
  args: Record<string, unknown> = {},
): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}
