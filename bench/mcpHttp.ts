// Plain HTTP exchanges with an MCP endpoint, for what happens outside the measured windows:
// opening sessions, and checking one answer of each kind in full before a target is measured.
import http from 'node:http';

/** The headers every benchmark request carries (the SDK rejects a POST without both types). */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** One HTTP answer, read whole. */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** POSTs `body` to `url` and reads the whole answer (bounded by `timeoutMs`). */
export function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs = 30_000,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${url} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The JSON-RPC messages of an answer: the JSON body, or the data of each SSE event. */
export function messagesOf(answer: HttpAnswer): unknown[] {
  const type = answer.headers['content-type'] ?? '';
  if (!type.includes('text/event-stream')) return answer.text === '' ? [] : [JSON.parse(answer.text)];
  const messages: unknown[] = [];
  for (const block of answer.text.replace(/\r\n?/g, '\n').split('\n\n')) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''));
    if (data.length > 0) messages.push(JSON.parse(data.join('\n')));
  }
  return messages;
}

/** Opens one MCP session (initialize, then notifications/initialized) and returns its id. */
export async function openSession(url: string): Promise<string> {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'toolpin-bench', version: '1.0.0' },
    },
  });
  const answer = await post(url, BASE_HEADERS, initialize);
  const session = answer.headers['mcp-session-id'];
  if (answer.status !== 200 || typeof session !== 'string')
    throw new Error(`initialize at ${url} failed: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
  const headers = { ...BASE_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  const initialized = await post(
    url,
    headers,
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  );
  if (initialized.status !== 202)
    throw new Error(`notifications/initialized at ${url} failed: HTTP ${initialized.status}`);
  return session;
}

/** Closes the keep-alive connections of these helpers. */
export function closeHttp(): void {
  agent.destroy();
}
