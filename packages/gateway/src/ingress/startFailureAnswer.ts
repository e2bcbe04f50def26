import type { Readable, Writable } from 'node:stream';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError } from '../wire/jsonRpc.js';
import { LineFramer } from '../wire/lineFramer.js';
import { DEFAULT_MAX_BRIDGED_MESSAGE_BYTES } from '../defaults.js';

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
    const lines = new LineFramer(DEFAULT_MAX_BRIDGED_MESSAGE_BYTES);
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
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      lines.push(bytes, (line) => {
        // The client was told why: nothing more will be served.
        if (line === undefined || !answer(line.toString('utf8').trim())) return true;
        output.write('', () => done());
        return false;
      });
    };
    input.on('data', onData);
    input.once('end', done);
    input.once('close', done);
  });
}
