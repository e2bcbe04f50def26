import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the balancer forwarded: to which target, and the JSON-RPC methods it carried. */
export interface ForwardedRequest {
  readonly target: number;
  readonly httpMethod: string;
  readonly methods: readonly string[];
}

/** A tiny round-robin HTTP balancer for tests: no stickiness, each request to the next target. */
export interface RoundRobin {
  readonly url: string;
  readonly forwarded: ForwardedRequest[];
  close(): Promise<void>;
}

function methodsOf(body: Buffer): string[] {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return (Array.isArray(value) ? value : [value])
      .map((message) => (message as { method?: unknown }).method)
      .filter((method): method is string => typeof method === 'string');
  } catch {
    return [];
  }
}

/** Alternates requests between `targets` (base URLs); bodies are read whole, responses streamed as they come. */
export async function startRoundRobin(targets: readonly string[]): Promise<RoundRobin> {
  const forwarded: ForwardedRequest[] = [];
  let next = 0;
  const agent = new http.Agent({ keepAlive: false });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = next++ % targets.length;
      forwarded.push({ target, httpMethod: req.method ?? 'GET', methods: methodsOf(body) });
      const url = new URL(req.url ?? '/', targets[target]);
      const upstream = http.request(
        url,
        { method: req.method, headers: { ...req.headers, host: url.host }, agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwarded,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
