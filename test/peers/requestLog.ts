import type { IncomingHttpHeaders } from 'node:http';

/** One JSON-RPC message (or bodyless GET/DELETE) a peer received, with the HTTP headers it came with. */
export interface RecordedRequest {
  httpMethod: string;
  path: string;
  /** JSON-RPC method, absent for GET/DELETE and for posted responses. */
  method?: string;
  /** JSON-RPC id of a request or posted response, absent for notifications and bodyless requests. */
  id?: string | number | null;
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
    const entry: RecordedRequest = { httpMethod, path, headers: { ...headers } };
    if (method !== undefined) entry.method = method;
    if (typeof message === 'object' && message !== null && 'id' in message) {
      const id = message.id;
      if (typeof id === 'string' || typeof id === 'number' || id === null) entry.id = id;
    }
    log.push(entry);
  }
}
