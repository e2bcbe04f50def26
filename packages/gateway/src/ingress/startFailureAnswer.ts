import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError } from '../wire/jsonRpc.js';

/** How long a `wrap` that cannot start waits for its client's first request. */
const WAIT_FOR_CLIENT_MS = 10_000;

/**
 * What `toolpin wrap` does when it cannot start (a pin that does not load, a server that cannot be
 * spawned): instead of closing under the client (which shows only "server disconnected"), it
 * answers the client's requests on stdio with an MCP error naming the reason (-32603, `data.reason`
 * the error's code), up to and including `initialize`, then resolves. Resolves too when stdin ends,
 * or when no request came within 10 s.
 */
export function answerStartFailure(
  input: Readable,
  output: Writable,
  message: string,
  reason: string,
): Promise<void> {
  return new Promise((resolve) => {
    let buffered = '';
    const decoder = new StringDecoder('utf8');
    const done = (): void => {
      clearTimeout(timer);
      input.off('data', onData);
      input.off('end', done);
      input.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, WAIT_FOR_CLIENT_MS);
    const answer = (line: string): boolean => {
      let request: { id?: unknown; method?: unknown } | undefined;
      try {
        request = JSON.parse(line) as typeof request;
      } catch {
        return false;
      }
      const id = request?.id;
      if (typeof request?.method !== 'string' || (typeof id !== 'string' && typeof id !== 'number'))
        return false;
      const refusal = jsonRpcError(id, ErrorCodes.INTERNAL_ERROR, message, { reason });
      output.write(`${JSON.stringify(refusal)}\n`);
      return request.method === 'initialize';
    };
    const onData = (chunk: Buffer | string): void => {
      buffered += typeof chunk === 'string' ? chunk : decoder.write(chunk);
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end).trim();
        buffered = buffered.slice(end + 1);
        // The client was told why: nothing more will be served.
        if (line !== '' && answer(line)) return void output.write('', () => done());
      }
    };
    input.on('data', onData);
    input.once('end', done);
    input.once('close', done);
  });
}
