// The inspecting floor (BENCH_FLOOR=parse): the least a proxy that reads what it forwards does, as
// its own process. node:http alone, a keep-alive agent; the request body read whole, parsed and
// re-serialized (framed by Content-Length); the answer read whole, each SSE event's data parsed and
// re-encoded, a JSON body parsed and re-serialized. No validation, no policy, no streaming: it says
// what reading every message costs before anything is decided on it. Not a safe proxy.
// Usage: node --import tsx bench/parseFloor.ts <upstream origin>
import http from 'node:http';
import { serveChild, upstreamOrigin } from './serveChild.js';

const target = upstreamOrigin('parseFloor.ts');
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
const DROPPED = new Set(['content-length', 'connection', 'keep-alive', 'transfer-encoding', 'host']);

/** Every SSE event's data parsed and re-encoded (LF-framed events of `data:` lines, as SDK servers send). */
function reencodeSse(text: string): string {
  let out = '';
  for (const event of text.split('\n\n')) {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data !== '') out += `event: message\ndata: ${JSON.stringify(JSON.parse(data))}\n\n`;
  }
  return out;
}

function readWhole(stream: http.IncomingMessage, done: (text: string) => void): void {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
}

function answer(res: http.ServerResponse, upstream: http.IncomingMessage, text: string): void {
  const type = upstream.headers['content-type'];
  const headers: http.OutgoingHttpHeaders = {};
  if (type !== undefined) headers['content-type'] = type;
  const session = upstream.headers['mcp-session-id'];
  if (session !== undefined) headers['mcp-session-id'] = session;
  res.writeHead(upstream.statusCode ?? 502, headers);
  if (text === '') res.end();
  else if (type?.includes('event-stream') === true) res.end(reencodeSse(text));
  else res.end(JSON.stringify(JSON.parse(text)));
}

const server = http.createServer((req, res) => {
  readWhole(req, (text) => {
    const body = text === '' ? '' : JSON.stringify(JSON.parse(text));
    const headers: http.OutgoingHttpHeaders = {
      host: target.host,
      'content-length': Buffer.byteLength(body),
    };
    for (const [name, value] of Object.entries(req.headers)) if (!DROPPED.has(name)) headers[name] = value;
    const upstream = http.request(
      { hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers, agent },
      (response) => readWhole(response, (answered) => answer(res, response, answered)),
    );
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  });
});
serveChild(server, 'floor');
