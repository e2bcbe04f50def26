import { resolve } from 'node:path';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { GatewayError } from '../errors.js';

/** Where the live catalog is listed: a URL (with headers), or a command spawned over stdio. */
export type LiveTarget =
  | {
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
      /** @default 'streamable-http' */
      readonly transport?: 'streamable-http' | 'sse';
    }
  | {
      readonly command: readonly string[];
      readonly args?: readonly string[];
      /** Added to the SDK's default child environment (PATH, HOME, …); nothing else of ours is passed. */
      readonly env?: Readonly<Record<string, string>>;
      readonly cwd?: string;
    };

/** Options of {@link fetchLiveCatalog}. */
export interface LiveCatalogOptions {
  /** Client capabilities declared at initialize: some servers list tools per capability. */
  readonly capabilities?: ClientCapabilities;
  /** @default 30000 */
  readonly timeoutMs?: number;
  /** @default 1000 */
  readonly maxPages?: number;
  /** A relative stdio `cwd` is resolved against this folder (the pin file's). */
  readonly baseDir?: string;
}

/** A whole catalog, every page of it, as the server listed it (raw tool values). */
export interface LiveCatalog {
  readonly tools: unknown[];
  readonly pages: number;
  /** The protocol revision spoken, when the client reports it. */
  readonly protocolVersion: string | undefined;
}

// The tools are kept as sent: no SDK schema may drop or coerce a member before it is hashed.
const pageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
type ListPage = z.infer<typeof pageSchema>;

const CLIENT_INFO = { name: 'toolpin', version: '0.1.0' };

function unavailable(message: string, data: Record<string, unknown>, cause?: unknown): GatewayError {
  return new GatewayError(
    'GW_CATALOG_UNAVAILABLE',
    message,
    data,
    cause === undefined ? undefined : { cause },
  );
}

function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}

// fetch failed / connection refused: the server is not there, a 2026-07-28 client would not fare better.
function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError && /fetch failed/i.test(error.message);
}

/** Follows nextCursor until the last page; a failed page after the first means the listing is incomplete. */
async function listAllPages(
  request: (cursor: string | undefined) => Promise<ListPage>,
  maxPages: number,
): Promise<{ tools: unknown[]; pages: number }> {
  const tools: unknown[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  do {
    if (pages >= maxPages)
      throw unavailable(`the server listed more than ${maxPages} pages of tools; the listing is incomplete`, {
        stage: 'list',
        pages,
      });
    let page: ListPage;
    try {
      page = await request(cursor);
    } catch (error) {
      const where =
        pages === 0
          ? 'tools/list failed'
          : `page ${pages + 1} of tools/list failed after ${pages} complete page(s); the listing is incomplete`;
      throw unavailable(`${where}: ${reason(error)}`, { stage: 'list', pages }, error);
    }
    tools.push(...page.tools);
    pages++;
    cursor = page.nextCursor;
    if (cursor !== undefined && seen.has(cursor))
      throw unavailable(`the server repeated the cursor ${JSON.stringify(cursor)}; the listing never ends`, {
        stage: 'list',
        pages,
      });
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor !== undefined);
  return { tools, pages };
}

async function listWithV1(
  target: LiveTarget,
  options: LiveCatalogOptions,
  timeout: number,
  maxPages: number,
): Promise<LiveCatalog> {
  const client = new Client(
    CLIENT_INFO,
    options.capabilities === undefined ? {} : { capabilities: options.capabilities },
  );
  let transport: StreamableHTTPClientTransport | SSEClientTransport | StdioClientTransport;
  if ('command' in target) {
    const [command = '', ...first] = target.command;
    transport = new StdioClientTransport({
      command,
      args: [...first, ...(target.args ?? [])],
      env: { ...getDefaultEnvironment(), ...target.env },
      stderr: 'inherit',
      ...(target.cwd === undefined ? {} : { cwd: resolve(options.baseDir ?? process.cwd(), target.cwd) }),
    });
  } else {
    const requestInit = { headers: { ...target.headers } };
    transport =
      target.transport === 'sse'
        ? new SSEClientTransport(new URL(target.url), { requestInit })
        : new StreamableHTTPClientTransport(new URL(target.url), { requestInit });
  }
  await client.connect(transport, { timeout });
  try {
    const listed = await listAllPages(
      (cursor) =>
        client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, pageSchema, {
          timeout,
        }),
      maxPages,
    );
    return {
      ...listed,
      protocolVersion:
        transport instanceof StreamableHTTPClientTransport ? transport.protocolVersion : undefined,
    };
  } finally {
    // End the session upstream (DELETE) rather than leave it to expire.
    if (transport instanceof StreamableHTTPClientTransport)
      await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

async function listWithV2(
  url: string,
  headers: Readonly<Record<string, string>>,
  options: LiveCatalogOptions,
  timeout: number,
  maxPages: number,
): Promise<LiveCatalog> {
  const client = new ClientV2(CLIENT_INFO, {
    versionNegotiation: { mode: 'auto' },
    ...(options.capabilities === undefined ? {} : { capabilities: options.capabilities as never }),
  });
  await client.connect(
    new StreamableHTTPClientTransportV2(new URL(url), { requestInit: { headers: { ...headers } } }),
    { timeout },
  );
  try {
    const listed = await listAllPages(
      (cursor) =>
        client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, pageSchema, {
          timeout,
        }),
      maxPages,
    );
    return { ...listed, protocolVersion: client.getNegotiatedProtocolVersion() };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * Lists a server's whole catalog as a real MCP client: initialize (SDK v1), then every tools/list
 * page, following nextCursor. A Streamable HTTP server that refuses the initialize handshake is
 * tried again with the SDK v2 client, which negotiates 2026-07-28. Rejects with GatewayError
 * GW_CATALOG_UNAVAILABLE when the server cannot be reached or the listing is incomplete; a
 * partial catalog is never returned.
 */
export async function fetchLiveCatalog(
  target: LiveTarget,
  options: LiveCatalogOptions = {},
): Promise<LiveCatalog> {
  const timeout = options.timeoutMs ?? 30_000;
  const maxPages = options.maxPages ?? 1000;
  try {
    return await listWithV1(target, options, timeout, maxPages);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    const where = 'command' in target ? `command ${target.command[0] ?? ''}` : target.url;
    const first = unavailable(`cannot connect to ${where}: ${reason(error)}`, { stage: 'connect' }, error);
    if ('command' in target || target.transport === 'sse' || isNetworkError(error)) throw first;
    try {
      return await listWithV2(target.url, target.headers, options, timeout, maxPages);
    } catch (retry) {
      if (retry instanceof GatewayError) throw retry;
      throw unavailable(
        `${first.message}; a 2026-07-28 client failed too: ${reason(retry)}`,
        { stage: 'connect' },
        retry,
      );
    }
  }
}
