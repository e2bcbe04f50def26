import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeWebReadableStream } from 'node:stream/web';

/**
 * Serves a web-standard `fetch(Request) → Response` handler from node:http
 * (what `toNodeHandler` in @modelcontextprotocol/node does; that package is not installed here).
 * The Request's signal aborts when the client goes away, which ends open SSE streams.
 */
export function nodeFetchAdapter(
  fetchHandler: (request: Request) => Promise<Response>,
  onRequest?: (req: IncomingMessage, body: Buffer) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      onRequest?.(req, body);
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (Array.isArray(value)) for (const v of value) headers.append(name, v);
        else if (value !== undefined) headers.set(name, value);
      }
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && body.length > 0;
      const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        signal: abort.signal,
        ...(hasBody ? { body } : {}),
      });
      const response = await fetchHandler(request);
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      if (response.body === null) {
        res.end();
        return;
      }
      const stream = Readable.fromWeb(response.body as NodeWebReadableStream<Uint8Array>);
      stream.on('error', () => res.destroy());
      res.on('close', () => stream.destroy());
      stream.pipe(res);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
  };
}
