// The floor: the least a proxy can do, run as its own process. node:http alone, a keep-alive
// agent, the request and the answer piped through unread (no framework, no inspection, no
// header rewriting beyond Host). No real proxy costs less; it says how far toolpin is from it.
// Usage: node --import tsx bench/floor.ts <upstream origin>
import http from 'node:http';
import { serveChild, upstreamOrigin } from './serveChild.js';

const target = upstreamOrigin('floor.ts');
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

const server = http.createServer((req, res) => {
  const upstream = http.request(
    {
      hostname: target.hostname,
      port: target.port,
      path: req.url,
      method: req.method,
      headers: { ...req.headers, host: target.host },
      agent,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  // A client that leaves mid-answer takes the upstream request with it.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
});
serveChild(server, 'floor');
