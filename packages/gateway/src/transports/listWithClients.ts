import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { listAllPages, pageSchema } from './listAllPages.js';
import { CLIENT_INFO } from '../defaults.js';

/** What one listing client needs besides its transport. */
export interface ListingContext {
  readonly capabilities: ClientCapabilities | undefined;
  readonly timeout: number;
  readonly maxPages: number;
}

/** A whole catalog as one client listed it. */
export interface Listing {
  readonly tools: unknown[];
  readonly pages: number;
  readonly protocolVersion: string | undefined;
}

/** The tools/list request for one page. */
function toolsListRequest(cursor: string | undefined): { method: 'tools/list'; params: { cursor?: string } } {
  return { method: 'tools/list', params: cursor === undefined ? {} : { cursor } };
}

// SSEClientTransport.start() waits for the `endpoint` event with no timeout of its own (connect's
// covers initialize only): a GET answered with a stream that never names its endpoint would hang.
async function connectWithin(client: Client, transport: SSEClientTransport, timeout: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no endpoint event, or no initialize answer, within ${timeout} ms`)),
      timeout,
    );
  });
  try {
    await Promise.race([client.connect(transport, { timeout }), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Lists with the SDK v1 client over one transport (Streamable HTTP, HTTP+SSE, or a stdio child), closing it whatever happens. */
export async function listWithV1(transport: Transport, context: ListingContext): Promise<Listing> {
  const { capabilities, timeout, maxPages } = context;
  const client = new Client({ ...CLIENT_INFO }, capabilities === undefined ? {} : { capabilities });
  try {
    if (transport instanceof SSEClientTransport) await connectWithin(client, transport, timeout);
    else await client.connect(transport, { timeout });
    const listed = await listAllPages(
      (cursor) => client.request(toolsListRequest(cursor), pageSchema, { timeout }),
      maxPages,
    );
    return {
      ...listed,
      protocolVersion:
        transport instanceof StreamableHTTPClientTransport ? transport.protocolVersion : undefined,
    };
  } finally {
    // End the session upstream (DELETE) rather than leave it to expire; a failed connect is closed
    // too, or an SSE stream's EventSource would keep reconnecting.
    if (transport instanceof StreamableHTTPClientTransport)
      await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
  }
}

/** Lists with the SDK v2 client over Streamable HTTP, negotiating 2026-07-28 (`versionNegotiation: auto`). */
export async function listWithV2(
  target: { readonly url: string; readonly headers: Readonly<Record<string, string>> },
  context: ListingContext,
): Promise<Listing> {
  const { capabilities, timeout, maxPages } = context;
  const client = new ClientV2(
    { ...CLIENT_INFO },
    {
      versionNegotiation: { mode: 'auto' },
      ...(capabilities === undefined ? {} : { capabilities: capabilities as never }),
    },
  );
  try {
    await client.connect(
      new StreamableHTTPClientTransportV2(new URL(target.url), {
        requestInit: { headers: { ...target.headers } },
      }),
      { timeout },
    );
    const listed = await listAllPages(
      (cursor) => client.request(toolsListRequest(cursor), pageSchema, { timeout }),
      maxPages,
    );
    return {
      ...listed,
      protocolVersion: client.getNegotiatedProtocolVersion(),
    };
  } finally {
    await client.close().catch(() => undefined);
  }
}
