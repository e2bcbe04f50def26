import { randomUUID } from 'node:crypto';
import { createParser } from 'eventsource-parser';
import { GatewayError } from '../errors.js';
import { catalogUnavailable, collectToolPages, type FetchedPage } from './collectToolPages.js';
import { jsonValueProblem } from '../wire/jsonDepth.js';
import { isResponse, messageProblem, type JsonRpcResponse } from '../wire/jsonRpc.js';
import { isUtf8Charset, mcpBodyKind, parseMediaType } from '../wire/mediaType.js';
import { listingMeta } from '../wire/mcpEra.js';
import { SURFACE_LISTINGS, type SurfaceListing } from '../wire/listedSurfaces.js';
import { readBounded } from '../wire/readBounded.js';
import { DEFAULT_MAX_PAGES, DEFAULT_MAX_UPSTREAM_BYTES } from '../defaults.js';
import type { PageBudget } from './listingBudget.js';

/** Options of {@link fetchToolPages}. */
export interface FetchToolPagesOptions {
  /** The upstream MCP endpoint. */
  readonly url: string;
  /** Headers of the client's own request that carry its session and credentials. */
  readonly headers: Readonly<Record<string, string>>;
  /** 2026-07-28 requests mirror the method in a header and carry `_meta` in params. */
  readonly stateless: boolean;
  /** `params._meta` of the client's request (protocol version, capabilities in 2026-07-28). */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** Bound on the whole listing (every page together, answers read whole), in ms. */
  readonly timeoutMs: number;
  /** @default 1000 */
  readonly maxPages?: number;
  /** Bound on one page's answer (all pages together: {@link MAX_LISTING_BYTES}). @default 64 MiB */
  readonly maxBytes?: number;
  /** The listing: tools, prompts, resource templates. @default tools */
  readonly listing?: SurfaceListing;
}

/** The gateway's own request's answer, validated; undefined when the text holds none. */
function answerIn(text: string, id: string, method: string): JsonRpcResponse | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  for (const message of Array.isArray(value) ? (value as unknown[]) : [value]) {
    if (isResponse(message) && message.id === id) {
      const problem = messageProblem(message);
      if (problem !== undefined)
        throw catalogUnavailable(`the upstream's answer to ${method} is not valid JSON-RPC (${problem})`);
      const found = jsonValueProblem(message);
      if (found !== undefined)
        throw catalogUnavailable(
          found.kind === 'too_deep'
            ? `the upstream's answer to ${method} is nested too deep`
            : `the upstream's answer to ${method} holds a number out of range`,
        );
      return message;
    }
  }
  return undefined;
}

/**
 * Reads the answer to the gateway's request from a JSON or SSE body, never more than `maxBytes`:
 * an upstream cannot make the gateway hold an endless answer.
 */
async function readAnswer(
  response: Response,
  id: string,
  sse: boolean,
  maxBytes: number,
  budget: PageBudget,
  method: string,
): Promise<JsonRpcResponse | undefined> {
  if (response.body === null) return undefined;
  let found: JsonRpcResponse | undefined;
  let json = '';
  const parser = createParser({
    maxBufferSize: maxBytes,
    onEvent: (event) => {
      if (found === undefined && event.data !== '') found = answerIn(event.data, id, method);
    },
  });
  const decoder = new TextDecoder();
  const end = await readBounded(response.body, maxBytes, (chunk) => {
    budget.count(chunk.byteLength);
    const text = decoder.decode(chunk, { stream: true });
    if (sse) parser.feed(text);
    else json += text;
    return found !== undefined;
  });
  if (end === 'too_large')
    throw catalogUnavailable(`the upstream's answer to ${method} exceeds ${maxBytes} bytes`);
  return sse ? found : answerIn(json + decoder.decode(), id, method);
}

async function requestPage(
  options: FetchToolPagesOptions,
  cursor: string | undefined,
  budget: PageBudget,
): Promise<unknown> {
  // The gateway's own ids are UUIDs under a prefix no client uses, so they never collide with a
  // client's ids in the same session.
  const id = `toolpin-${randomUUID()}`;
  const method = (options.listing ?? SURFACE_LISTINGS.tools).method;
  const params: Record<string, unknown> = {};
  if (cursor !== undefined) params.cursor = cursor;
  if (options.meta !== undefined) params._meta = listingMeta(options.meta);
  const response = await postListing(options, { jsonrpc: '2.0', id, method, params }, budget);
  const kind = await answerKind(response, method);
  let message: JsonRpcResponse | undefined;
  try {
    message = await readAnswer(
      response,
      id,
      kind === 'sse',
      options.maxBytes ?? DEFAULT_MAX_UPSTREAM_BYTES,
      budget,
      method,
    );
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw catalogUnavailable(`${method} response could not be read: ${(error as Error).message}`, {}, error);
  }
  if (message === undefined) throw catalogUnavailable(`the upstream sent no response to ${method}`);
  if (message.error !== undefined)
    throw catalogUnavailable(`the upstream refused ${method}: ${message.error.message}`);
  return message.result;
}

/** POSTs the gateway's listing request with the session's headers; a failure to send is the catalog's. */
async function postListing(
  options: FetchToolPagesOptions,
  request: { jsonrpc: '2.0'; id: string; method: string; params: Record<string, unknown> },
  budget: PageBudget,
): Promise<Response> {
  const headers: Record<string, string> = {
    ...options.headers,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  if (options.stateless) headers['mcp-method'] = request.method;
  try {
    return await fetch(options.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(request),
      // The listing's deadline, not the page's: it also ends the reading of the body.
      signal: budget.signal ?? AbortSignal.timeout(options.timeoutMs),
      // A redirect would take the gateway's request (and the client's credentials) elsewhere.
      redirect: 'manual',
    });
  } catch (error) {
    throw catalogUnavailable(
      `${request.method} to the upstream failed: ${(error as Error).message}`,
      {},
      error,
    );
  }
}

/** How the answer is framed (JSON or SSE); refuses (its body cancelled) a redirect, an HTTP error, another media type. */
async function answerKind(response: Response, method: string): Promise<'json' | 'sse'> {
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    throw catalogUnavailable(
      `${method} to the upstream answered HTTP ${response.status}; redirects are not followed`,
    );
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    // The status and challenge travel with the error: a 401/403 refuses the client's credential,
    // and the client must see the challenge to re-authenticate (ingress/authChallenge.ts).
    const challenge = response.headers.get('www-authenticate');
    throw catalogUnavailable(`${method} to the upstream answered HTTP ${response.status}`, {
      status: response.status,
      ...(challenge === null ? {} : { wwwAuthenticate: challenge }),
    });
  }
  const type = parseMediaType(response.headers.get('content-type') ?? undefined);
  const kind = type !== undefined && isUtf8Charset(type) ? mcpBodyKind(type) : 'other';
  if (kind === 'other') {
    await response.body?.cancel().catch(() => undefined);
    throw catalogUnavailable(
      `${method} to the upstream answered with media type ${response.headers.get('content-type') ?? '(none)'}`,
    );
  }
  return kind;
}

/**
 * Lists the upstream's whole catalog on behalf of a session (fetch on miss): every page, with the
 * session's own headers, so the server answers what it would answer that client.
 */
export async function fetchToolPages(options: FetchToolPagesOptions): Promise<FetchedPage[]> {
  return collectToolPages((cursor, budget) => requestPage(options, cursor, budget), {
    maxPages: options.maxPages ?? DEFAULT_MAX_PAGES,
    timeoutMs: options.timeoutMs,
    surface: options.listing?.surface ?? 'tools',
  });
}
