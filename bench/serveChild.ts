import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Runs a bench process's HTTP server as bench/children.ts expects of every child: keep-alive
 * connections held for a minute, a free port on 127.0.0.1, `bench-<name> ready <url>` on stderr
 * once listening, and SIGTERM closing every connection before the process exits.
 */
export function serveChild(server: Server, name: string): void {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stderr.write(`bench-${name} ready http://127.0.0.1:${port}/mcp\n`);
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

/** The upstream origin a proxy child is started with (its first argument), or a usage error. */
export function upstreamOrigin(script: string): URL {
  const origin = process.argv[2];
  if (origin === undefined) {
    process.stderr.write(`usage: ${script} <upstream origin>\n`);
    process.exit(2);
  }
  return new URL(origin);
}
