import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectV1Client, defaultTools, type PeerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from './gatewayHarness.js';
import { pinFor, type PinForOptions } from './pinFor.js';
import { useScoped, type Closable, type ScopeOptions } from './useScoped.js';

/** An upstream peer, a gateway pinning it as one server, and a client connected through the gateway. */
export interface PinnedChain<C extends Closable = Client> {
  readonly upstream: PeerHandle;
  readonly gateway: GatewayHarness;
  readonly client: C;
  /** The gateway's `/<name>/mcp`. */
  readonly endpoint: string;
  /** Closes the client, then the gateway, then the upstream. */
  close(): Promise<void>;
}

/** Options of {@link startPinnedChain}. */
export interface PinnedChainOptions<C extends Closable> {
  /** The server name: the route is `/<name>/mcp`. */
  readonly name: string;
  /** The tools the pin approves. @default defaultTools() */
  readonly tools?: readonly object[];
  readonly pin?: PinForOptions;
  /** Merged into the gateway file (e.g. `limits`). */
  readonly gateway?: Record<string, unknown>;
  /** Connects the client to the endpoint. @default connectV1Client */
  readonly connect?: (endpoint: string) => Promise<C>;
}

/**
 * The setup most gateway tests share: pins `upstream` (already started; closed with the chain, or
 * here if the gateway or the client cannot start) in a gateway started in-process, and connects a
 * client to `/<name>/mcp`.
 */
export async function startPinnedChain<C extends Closable = Client>(
  upstream: PeerHandle,
  options: PinnedChainOptions<C>,
): Promise<PinnedChain<C>> {
  const connect = options.connect ?? (connectV1Client as unknown as (endpoint: string) => Promise<C>);
  let gateway: GatewayHarness | undefined;
  try {
    gateway = await startGatewayHarness(
      [pinFor(options.name, upstream.url, options.tools ?? defaultTools(), options.pin)],
      options.gateway,
    );
    const endpoint = `${gateway.url}/${options.name}/mcp`;
    const client = await connect(endpoint);
    const started = gateway;
    return {
      upstream,
      gateway: started,
      client,
      endpoint,
      close: async () => {
        await client.close();
        await started.close();
        await upstream.close();
      },
    };
  } catch (error) {
    await gateway?.close();
    await upstream.close();
    throw error;
  }
}

/**
 * A describe's chain: registers the jest hooks that start it (once, or before each test with
 * `perTest`) and close it, and returns a view whose members are the chain in force (useScoped).
 */
export function usePinnedChain(
  start: () => Promise<PinnedChain>,
  options: ScopeOptions<PinnedChain> = {},
): Omit<PinnedChain, 'close'> {
  return useScoped(start, options);
}
