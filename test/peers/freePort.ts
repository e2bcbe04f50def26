import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/** Asks the OS for a free 127.0.0.1 port (for child processes that cannot bind port 0 and report it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
