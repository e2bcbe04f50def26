import type { IncomingMessage } from 'node:http';
import type { ServerGuard } from '../guard/serverGuard.js';
import type { JsonRpcId, JsonRpcResponse } from '../wire/jsonRpc.js';

/** What the gateway knows of one HTTP exchange while it is proxied. */
export interface Exchange {
  readonly guard: ServerGuard;
  /** Whose catalog the inspected results belong to (see sessionKeyOf). */
  readonly sessionKey: string;
  /** The body sent upstream (the client's bytes, or the batch without its refused members). */
  readonly body: Buffer | undefined;
  /** Ids of the requests forwarded, so each gets an error if the upstream dies. */
  readonly requestIds: readonly JsonRpcId[];
  /** True when the forwarded requests include a tools/list: a JSON answer must be inspected. */
  readonly hasList: boolean;
  /** Errors for refused members of a batch, merged into the upstream's answer. */
  readonly injected: readonly JsonRpcResponse[];
  /** The client sent a batch: a JSON answer is an array. */
  readonly batch: boolean;
}

const exchanges = new WeakMap<IncomingMessage, Exchange>();

/** Attaches the exchange to its request for the proxy's callbacks. */
export function attachExchange(req: IncomingMessage, exchange: Exchange): void {
  exchanges.set(req, exchange);
}

/** The exchange of a proxied request. */
export function exchangeOf(req: IncomingMessage): Exchange | undefined {
  return exchanges.get(req);
}
