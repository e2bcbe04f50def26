import { request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';

/** An HTTP response read as it arrives (SSE streams), over node:http so any header can be sent. */
export interface HttpStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Everything received so far. */
  text(): string;
  /** Resolves with the text received so far once `done(text)` holds; rejects after `waitMs` or when the stream ends without it. */
  waitFor(done: (text: string) => boolean, what: string, waitMs?: number): Promise<string>;
  /** Resolves when the response ended (or the connection closed). */
  readonly ended: Promise<void>;
  /** Drops the connection. */
  close(): void;
}

/** Options of {@link openHttpStream}. */
export interface HttpStreamOptions {
  method?: string;
  headers?: OutgoingHttpHeaders;
  body?: string;
}

/** Sends one request with exactly these headers and returns the response as a live stream. */
export function openHttpStream(url: string, options: HttpStreamOptions = {}): Promise<HttpStream> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false },
      (res) => {
        let text = '';
        let finished = false;
        const waiters = new Set<() => void>();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          for (const waiter of waiters) waiter();
        });
        const ended = new Promise<void>((done) => {
          const end = (): void => {
            finished = true;
            for (const waiter of waiters) waiter();
            done();
          };
          res.once('end', end);
          res.once('close', end);
          res.once('error', end);
        });
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: () => text,
          ended,
          close: () => req.destroy(),
          waitFor: (done, what, waitMs = 5000) =>
            new Promise<string>((ok, fail) => {
              const timer = setTimeout(
                () => settle(new Error(`timed out waiting for ${what}; received:\n${text}`)),
                waitMs,
              );
              const check = (): void => {
                if (done(text)) settle();
                else if (finished) settle(new Error(`stream ended before ${what}; received:\n${text}`));
              };
              function settle(error?: Error): void {
                clearTimeout(timer);
                waiters.delete(check);
                if (error === undefined) ok(text);
                else fail(error);
              }
              waiters.add(check);
              check();
            }),
        });
      },
    );
    req.once('error', reject);
    req.end(options.body);
  });
}
