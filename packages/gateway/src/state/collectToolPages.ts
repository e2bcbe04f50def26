import { GatewayError } from '../errors.js';
import { ListingBudget, type ListingLimits, type PageBudget } from './listingBudget.js';
import { SURFACE_LISTINGS } from '../wire/listedSurfaces.js';

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
 * requests and whatever is listed (`limits.surface`: tools, prompts, resource templates). Bounded as a whole: more than `limits.maxPages` pages, or a cursor the server already
 * gave (a listing that would never end), is GW_CATALOG_UNAVAILABLE (`data: {stage: 'list', pages}`),
 * and so are its bytes and time together past `limits.maxBytes` / `limits.timeoutMs` (see
 * ListingBudget: `data.bound`). A partial listing is never returned; a page that fails rejects
 * with that page's error.
 */
export async function collectToolPages(
  requestPage: (cursor: string | undefined, budget: PageBudget) => Promise<unknown>,
  limits: ListingLimits,
): Promise<FetchedPage[]> {
  const pages: FetchedPage[] = [];
  const seen = new Set<string>();
  const budget = new ListingBudget(limits);
  let cursor: string | undefined;
  try {
    do {
      if (pages.length >= limits.maxPages)
        throw catalogUnavailable(
          `the upstream listed more than ${limits.maxPages} pages of ${SURFACE_LISTINGS[limits.surface ?? 'tools'].items}; the listing is incomplete`,
          { stage: 'list', pages: pages.length, bound: 'pages' },
        );
      const asked = cursor;
      const result = await budget.page((left) => requestPage(asked, left));
      pages.push({ cursor, result });
      cursor = nextCursorOf(result);
      if (cursor !== undefined && seen.has(cursor))
        throw catalogUnavailable(
          `the upstream repeated the cursor ${JSON.stringify(cursor)}; the listing never ends`,
          { stage: 'list', pages: pages.length },
        );
      if (cursor !== undefined) seen.add(cursor);
    } while (cursor !== undefined);
  } finally {
    budget.stop();
  }
  return pages;
}

function nextCursorOf(result: unknown): string | undefined {
  const next = (result as { nextCursor?: unknown } | null | undefined)?.nextCursor;
  return typeof next === 'string' ? next : undefined;
}
