import { connect, type Socket } from 'node:net';

/** One HTTP response as read off the wire by {@link RawConnection}. */
export interface RawResponse {
  readonly status: number;
  /** Header lines in order, names lower-cased. */
  readonly headers: readonly (readonly [string, string])[];
  /** The body so far, de-chunked, as UTF-8. */
  body: string;
  /** True once the body is complete (its length reached, the last chunk, or the connection closed). */
  complete: boolean;
}

/** The value of a header (the first of that name), or undefined. */
export function headerOf(response: RawResponse, name: string): string | undefined {
  return response.headers.find(([key]) => key === name.toLowerCase())?.[1];
}

/**
 * A client that writes exact bytes on one TCP connection and reads every response on it
 * (pipelined ones included) with a minimal HTTP/1.1 parser: no SDK, no fetch, nothing lenient or
 * strict that a real client might not be.
 */
export class RawConnection {
  readonly responses: RawResponse[] = [];
  /** Every byte received, as UTF-8. */
  received = '';
  closed = false;
  readonly #socket: Socket;
  #buffer = Buffer.alloc(0);
  #current: { response: RawResponse; length?: number; chunked: boolean; untilClose: boolean } | undefined;
  readonly #waiters = new Set<() => void>();
  /** Requests answered without a body (HEAD), in order, so their responses are read as such. */
  readonly #bodyless: boolean[] = [];

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.received += chunk.toString('utf8');
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#parse();
      this.#wake();
    });
    socket.on('close', () => {
      this.closed = true;
      if (this.#current !== undefined) this.#current.response.complete = true;
      this.#wake();
    });
    socket.on('error', () => undefined);
  }

  /** Opens a connection to the host and port of `url`. */
  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Writes exact bytes; `bodyless` marks a HEAD request whose response has no body. */
  write(bytes: string | Buffer, bodyless = false): void {
    this.#bodyless.push(bodyless);
    this.#socket.write(bytes);
  }

  /** Resolves once `done` holds; rejects after `waitMs` or when the connection closes without it. */
  waitFor(done: (connection: RawConnection) => boolean, what: string, waitMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => settle(new Error(`timed out waiting for ${what}; received:\n${this.received}`)),
        waitMs,
      );
      const check = (): void => {
        if (done(this)) settle();
        else if (this.closed)
          settle(new Error(`connection closed before ${what}; received:\n${this.received}`));
      };
      // Conditions on other peers (what the upstream logged) change without traffic here.
      const poll = setInterval(check, 10);
      const settle = (error?: Error): void => {
        clearTimeout(timer);
        clearInterval(poll);
        this.#waiters.delete(check);
        if (error === undefined) resolve();
        else reject(error);
      };
      this.#waiters.add(check);
      check();
    });
  }

  /** Resolves with the n-th response (0-based) once it is complete. */
  async response(index = 0, waitMs = 5000): Promise<RawResponse> {
    await this.waitFor((c) => c.responses[index]?.complete === true, `response ${index + 1}`, waitMs);
    return this.responses[index]!;
  }

  /** Resolves when the server closed the connection (bounded). */
  async whenClosed(waitMs = 5000): Promise<void> {
    await this.waitFor((c) => c.closed, 'the connection to close', waitMs).catch((error: Error) => {
      if (!this.closed) throw error;
    });
  }

  close(): void {
    this.#socket.destroy();
  }

  /** Stops reading (a slow client: the server's writes back up), until {@link resume}. */
  pause(): void {
    this.#socket.pause();
  }

  resume(): void {
    this.#socket.resume();
  }

  #wake(): void {
    for (const waiter of this.#waiters) waiter();
  }

  #parse(): void {
    for (;;) {
      if (this.#current === undefined) {
        const end = this.#buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = this.#buffer.subarray(0, end).toString('latin1').split('\r\n');
        this.#buffer = this.#buffer.subarray(end + 4);
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
        const headers = lines.slice(1).map((line): [string, string] => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
        });
        const response: RawResponse = { status, headers, body: '', complete: false };
        if (status >= 100 && status < 200) continue;
        this.responses.push(response);
        const bodyless =
          this.#bodyless[this.responses.length - 1] === true || status === 204 || status === 304;
        const chunked = /chunked/i.test(headerOf(response, 'transfer-encoding') ?? '');
        const lengthHeader = headerOf(response, 'content-length');
        const length = bodyless
          ? 0
          : chunked
            ? undefined
            : lengthHeader === undefined
              ? undefined
              : Number(lengthHeader);
        this.#current = { response, chunked, untilClose: !chunked && length === undefined };
        if (length !== undefined) this.#current.length = length;
        if (length === 0) {
          response.complete = true;
          this.#current = undefined;
        }
        continue;
      }
      const current = this.#current;
      if (current.untilClose) {
        current.response.body += this.#buffer.toString('utf8');
        this.#buffer = Buffer.alloc(0);
        return;
      }
      if (current.length !== undefined) {
        const take = Math.min(current.length, this.#buffer.length);
        current.response.body += this.#buffer.subarray(0, take).toString('utf8');
        this.#buffer = this.#buffer.subarray(take);
        current.length -= take;
        if (current.length > 0) return;
        current.response.complete = true;
        this.#current = undefined;
        continue;
      }
      // chunked: <hex size>\r\n<data>\r\n ... 0\r\n\r\n
      const lineEnd = this.#buffer.indexOf('\r\n');
      if (lineEnd < 0) return;
      const size = parseInt(this.#buffer.subarray(0, lineEnd).toString('latin1'), 16);
      if (size === 0) {
        // The last chunk, optional trailer lines, and the blank line that ends them.
        const end = this.#buffer.indexOf('\r\n\r\n', lineEnd);
        if (end < 0) return;
        this.#buffer = this.#buffer.subarray(end + 4);
        current.response.complete = true;
        this.#current = undefined;
        continue;
      }
      if (this.#buffer.length < lineEnd + 2 + size + 2) return;
      current.response.body += this.#buffer.subarray(lineEnd + 2, lineEnd + 2 + size).toString('utf8');
      this.#buffer = this.#buffer.subarray(lineEnd + 2 + size + 2);
    }
  }
}

/** Builds exact request bytes: the request line, the header lines as given, CRLF, the body. */
export function rawRequest(
  method: string,
  url: string,
  headers: readonly (readonly [string, string | number])[],
  body: string | Buffer = '',
): Buffer {
  const { pathname, search, host } = new URL(url);
  const lines = [
    `${method} ${pathname}${search} HTTP/1.1`,
    `Host: ${host}`,
    ...headers.map(([n, v]) => `${n}: ${v}`),
  ];
  return Buffer.concat([
    Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'),
    Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
  ]);
}

/** A POST of a JSON text with an explicit Content-Length and these extra header lines. */
export function rawPost(
  url: string,
  body: string,
  headers: readonly (readonly [string, string | number])[] = [],
  contentType = 'application/json',
): Buffer {
  return rawRequest(
    'POST',
    url,
    [
      ['Content-Type', contentType],
      ['Accept', 'application/json, text/event-stream'],
      ['Content-Length', Buffer.byteLength(body)],
      ...headers,
    ],
    body,
  );
}

/** Sends one request on a fresh connection and returns its complete response. */
export async function exchangeRaw(
  url: string,
  bytes: string | Buffer,
  waitMs = 5000,
): Promise<RawResponse & { received: string }> {
  const connection = await RawConnection.open(url);
  try {
    connection.write(bytes);
    const response = await connection.response(0, waitMs);
    return Object.assign(response, { received: connection.received });
  } finally {
    connection.close();
  }
}

/** `Name: value` pairs of a session's headers, as {@link rawRequest} takes them. */
export function headerLines(headers: Record<string, string>): [string, string][] {
  return Object.entries(headers);
}
