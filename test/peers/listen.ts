import type { Server as HttpServer, RequestListener } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP server listening on 127.0.0.1 with an OS-assigned port. */
export interface LoopbackServer {
  server: HttpServer;
  port: number;
  /** Stops listening and drops every open connection (SSE streams included). */
  close(): Promise<void>;
}

export async function listenOnLoopback(handler: RequestListener): Promise<LoopbackServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
