import type { IncomingHttpHeaders } from 'node:http';

/** One JSON-RPC message (or bodyless GET/DELETE) a peer received, with the HTTP headers it came with. */
export interface RecordedRequest {
  httpMethod: string;
  path: string;
  /** JSON-RPC method, absent for GET/DELETE and for posted responses. */
  method?: string;
  headers: IncomingHttpHeaders;
}

/** Appends one entry per JSON-RPC message in `body` (arrays are batches) to `log`. */
export function recordRequest(
  log: RecordedRequest[],
  httpMethod: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: unknown,
): void {
  const messages: unknown[] = Array.isArray(body) ? body : body === undefined ? [] : [body];
  if (messages.length === 0) {
    log.push({ httpMethod, path, headers: { ...headers } });
    return;
  }
  for (const message of messages) {
    const method =
      typeof message === 'object' &&
      message !== null &&
      'method' in message &&
      typeof message.method === 'string'
        ? message.method
        : undefined;
    log.push(
      method === undefined
        ? { httpMethod, path, headers: { ...headers } }
        : { httpMethod, path, method, headers: { ...headers } },
    );
  }
}
