import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { listAllPages, listRequest, pageSchemaOf, type ListPage } from './listAllPages.js';
import { SURFACE_LISTINGS, type ListedSurface } from '../wire/listedSurfaces.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CLIENT_INFO } from '../defaults.js';

/** What one listing client needs besides its transport. */
export interface ListingContext {
  readonly capabilities: ClientCapabilities | undefined;
  readonly timeout: number;
  readonly maxPages: number;
  /** Surfaces listed besides tools, each only when the server's capabilities offer it. @default [] */
  readonly surfaces?: readonly Exclude<ListedSurface, 'tools'>[];
}

/** Every page of one surface other than tools, as the server listed it (raw values). */
export interface SurfaceItems {
  readonly items: unknown[];
  readonly pages: number;
}

/** A whole catalog as one client listed it. */
export interface Listing {
  readonly tools: unknown[];
  readonly pages: number;
  readonly protocolVersion: string | undefined;
  /** The `instructions` of the server's initialize result (undefined: it sent none). */
  readonly instructions: string | undefined;
  /** The surfaces asked for that the server offers (capability `prompts`, `resources`), listed whole. */
  readonly surfaces: Partial<Record<Exclude<ListedSurface, 'tools'>, SurfaceItems>>;
  /** The surfaces asked for that the server's capabilities do not offer (not listed). */
  readonly notOffered: readonly Exclude<ListedSurface, 'tools'>[];
  /** Every surface beside tools the server's capabilities offer, asked for or not. */
  readonly offered: readonly Exclude<ListedSurface, 'tools'>[];
  /** What the server stated of itself (initialize's `serverInfo`, or server/discover's); undefined: nothing. */
  readonly serverInfo: Readonly<Record<string, unknown>> | undefined;
}

type PageRequest = (surface: ListedSurface, cursor: string | undefined) => Promise<ListPage>;

/** Lists tools, then every other surface asked for that the server offers, through the one page loop each. */
async function listEverything(
  request: PageRequest,
  offered: Readonly<Record<string, unknown>> | undefined,
  context: ListingContext,
): Promise<Omit<Listing, 'protocolVersion' | 'instructions' | 'serverInfo'>> {
  const tools = await listAllPages((cursor) => request('tools', cursor), context.maxPages);
  const surfaces: Listing['surfaces'] = {};
  const notOffered: Exclude<ListedSurface, 'tools'>[] = [];
  for (const surface of context.surfaces ?? []) {
    if (offered?.[SURFACE_LISTINGS[surface].capability] === undefined) {
      notOffered.push(surface);
      continue;
    }
    surfaces[surface] = await listAllPages((cursor) => request(surface, cursor), context.maxPages, surface);
  }
  const all = Object.keys(SURFACE_LISTINGS) as ListedSurface[];
  const others = all.filter((surface): surface is Exclude<ListedSurface, 'tools'> => surface !== 'tools');
  const offeredNow = others.filter(
    (surface) => offered?.[SURFACE_LISTINGS[surface].capability] !== undefined,
  );
  return { tools: tools.items, pages: tools.pages, surfaces, notOffered, offered: offeredNow };
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
  const { capabilities, timeout } = context;
  const client = new Client({ ...CLIENT_INFO }, capabilities === undefined ? {} : { capabilities });
  try {
    if (transport instanceof SSEClientTransport) await connectWithin(client, transport, timeout);
    else await client.connect(transport, { timeout });
    const listed = await listEverything(
      (surface, cursor) =>
        client.request(listRequest(surface, cursor) as never, pageSchemaOf(surface), { timeout }),
      client.getServerCapabilities(),
      context,
    );
    return {
      ...listed,
      protocolVersion:
        transport instanceof StreamableHTTPClientTransport ? transport.protocolVersion : undefined,
      instructions: client.getInstructions(),
      serverInfo: client.getServerVersion(),
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
  target: {
    readonly url: string;
    readonly headers: Readonly<Record<string, string>>;
    /** The fetch of every request (a bearerFetch for `auth.mode: client`). @default fetch */
    readonly fetch?: FetchLike;
  },
  context: ListingContext,
): Promise<Listing> {
  const { capabilities, timeout } = context;
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
        ...(target.fetch === undefined ? {} : { fetch: target.fetch }),
      }),
      { timeout },
    );
    const listed = await listEverything(
      (surface, cursor) =>
        client.request(listRequest(surface, cursor) as never, pageSchemaOf(surface), { timeout }),
      client.getServerCapabilities() as Readonly<Record<string, unknown>> | undefined,
      context,
    );
    return {
      ...listed,
      protocolVersion: client.getNegotiatedProtocolVersion(),
      instructions: client.getInstructions(),
      // 2026-07-28: what server/discover stated (`_meta`); a 2025 fallback: initialize's serverInfo.
      serverInfo: client.getServerVersion() as Readonly<Record<string, unknown>> | undefined,
    };
  } finally {
    await client.close().catch(() => undefined);
  }
}
