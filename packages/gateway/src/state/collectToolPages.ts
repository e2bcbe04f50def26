import { GatewayError } from '../errors.js';

/** One page of a listing: the cursor it was asked with and the raw result. */
export interface FetchedPage {
  readonly cursor: string | undefined;
  readonly result: unknown;
}

/** GW_CATALOG_UNAVAILABLE: the live catalog cannot be listed whole. */
export function catalogUnavailable(
  message: string,
  data: Record<string, unknown> = {},
  cause?: unknown,
): GatewayError {
  return new GatewayError(
    'GW_CATALOG_UNAVAILABLE',
    message,
    data,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Follows nextCursor from the first page to the last: the pages of one whole listing, each with
 * the cursor it was asked with. The one page loop of the gateway and the CLI, whatever carries its
 * requests. Bounded: more than `maxPages` pages, or a cursor the server already gave (a listing
 * that would never end), is GW_CATALOG_UNAVAILABLE (`data: {stage: 'list', pages}`); a partial
 * listing is never returned. A page that fails rejects with that page's error.
 */
export async function collectToolPages(
  requestPage: (cursor: string | undefined) => Promise<unknown>,
  maxPages: number,
): Promise<FetchedPage[]> {
  const pages: FetchedPage[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    if (pages.length >= maxPages)
      throw catalogUnavailable(
        `the upstream listed more than ${maxPages} pages of tools; the listing is incomplete`,
        { stage: 'list', pages: pages.length },
      );
    const result = await requestPage(cursor);
    pages.push({ cursor, result });
    cursor = nextCursorOf(result);
    if (cursor !== undefined && seen.has(cursor))
      throw catalogUnavailable(
        `the upstream repeated the cursor ${JSON.stringify(cursor)}; the listing never ends`,
        { stage: 'list', pages: pages.length },
      );
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor !== undefined);
  return pages;
}

function nextCursorOf(result: unknown): string | undefined {
  const next = (result as { nextCursor?: unknown } | null | undefined)?.nextCursor;
  return typeof next === 'string' ? next : undefined;
}
