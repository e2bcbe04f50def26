import { connect } from 'node:net';

/** One HTTP/1.1 answer as read off the socket. */
export interface RawHttpAnswer {
  readonly status: number;
  /** Header names lower-cased; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** True when the server closed the connection after this answer. */
  readonly closed: boolean;
}

/**
 * Sends `request` (exact bytes: request line, headers, blank line, body) to the host and port of
 * `url` and reads the first answer: its headers, then a Content-Length or chunked body (or up to
 * the close).
 * A raw client, for framing the SDK clients never produce. Bounded: gives up after `timeoutMs`.
 */
export function sendRawHttp(url: string, request: string, timeoutMs = 5000): Promise<RawHttpAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = Buffer.alloc(0);
    let settled = false;
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `no complete answer within ${timeoutMs} ms: ${received.toString('latin1').slice(0, 500)}`,
          ),
        ),
      timeoutMs,
    );
    function finish(error?: Error, answer?: RawHttpAnswer): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error !== undefined) reject(error);
      else resolve(answer as RawHttpAnswer);
    }
    function tryParse(closed: boolean): void {
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) {
        if (closed) finish(new Error('the connection closed before the headers'));
        return;
      }
      const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      const body = received.subarray(end + 4);
      const status = Number(statusLine.split(' ')[1]);
      if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
        const decoded = dechunk(body);
        if (decoded === undefined && !closed) return;
        finish(undefined, { status, headers, body: (decoded ?? body).toString('utf8'), closed });
        return;
      }
      const length = headers['content-length'];
      if (length !== undefined && body.length < Number(length) && !closed) return;
      if (length === undefined && !closed) return;
      finish(undefined, {
        status,
        headers,
        body: (length === undefined ? body : body.subarray(0, Number(length))).toString('utf8'),
        closed,
      });
    }
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('close', () => tryParse(true));
    socket.on('error', (error) => finish(error));
    socket.write(request);
  });
}

/** The payload of a complete chunked body, or undefined while its last chunk has not arrived. */
function dechunk(body: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', offset);
    if (lineEnd === -1) return undefined;
    const size = parseInt(body.subarray(offset, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return undefined;
    if (size === 0) return Buffer.concat(parts);
    const start = lineEnd + 2;
    if (body.length < start + size + 2) return undefined;
    parts.push(body.subarray(start, start + size));
    offset = start + size + 2;
  }
}
