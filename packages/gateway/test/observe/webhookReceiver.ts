import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST a receiver got: headers and the raw body (signatures are over the raw bytes). */
export interface ReceivedWebhook {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A local webhook receiver on 127.0.0.1:0. */
export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Resolves once `count` requests arrived (bounded by the test's timeout). */
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a receiver; `respond(n)` gives the status for the n-th request (1-based), or a promise of
 * it (a receiver that holds requests open until released).
 */
export async function startWebhookReceiver(
  respond: (n: number) => number | Promise<number> = () => 204,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const waiter of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      void Promise.resolve(respond(received.length)).then((status) => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(String(status));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/secret-path`,
    received,
    waitFor: (count) =>
      received.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
