import { GatewayError } from '../errors.js';
import type { JsonRpcResponse } from '../wire/jsonRpc.js';

interface Waiter {
  resolve(message: JsonRpcResponse): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** Answers to the requests the gateway itself sent upstream (fetch on miss), awaited by id. */
export class PendingReplies {
  readonly #waiters = new Map<string | number, Waiter>();

  /** Waits for the answer with this id; rejects with GW_CATALOG_UNAVAILABLE after `timeoutMs`. */
  expect(id: string, timeoutMs: number): Promise<JsonRpcResponse> {
    return new Promise<JsonRpcResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(id);
        reject(
          new GatewayError('GW_CATALOG_UNAVAILABLE', `the upstream did not answer within ${timeoutMs} ms`),
        );
      }, timeoutMs);
      this.#waiters.set(id, { resolve, reject, timer });
    });
  }

  /** Hands an upstream response to its waiter; false when it answers no request of the gateway's. */
  settle(message: JsonRpcResponse): boolean {
    const id = message.id;
    if (id === null) return false;
    const waiter = this.#waiters.get(id);
    if (waiter === undefined) return false;
    this.#waiters.delete(id);
    clearTimeout(waiter.timer);
    waiter.resolve(message);
    return true;
  }

  /** Fails every waiter (the upstream went away). */
  rejectAll(error: Error): void {
    for (const waiter of this.#waiters.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.#waiters.clear();
  }
}
