import { z } from 'zod';
import { catalogUnavailable, collectToolPages } from '../state/collectToolPages.js';
import { SURFACE_LISTINGS, type ListedSurface } from '../wire/listedSurfaces.js';
import { describeError } from './classifyAttemptFailure.js';

// The items are kept as sent: no SDK schema may drop or coerce a member before it is hashed.
const PAGE_SCHEMAS = {
  tools: z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() }),
  prompts: z.looseObject({ prompts: z.array(z.unknown()), nextCursor: z.string().optional() }),
  resourceTemplates: z.looseObject({
    resourceTemplates: z.array(z.unknown()),
    nextCursor: z.string().optional(),
  }),
} as const;

/** The page schema of a surface's listing: its items kept as raw values. */
export function pageSchemaOf(surface: ListedSurface): z.ZodType<Record<string, unknown>> {
  return PAGE_SCHEMAS[surface];
}

/** One page of a listing: the result, its items under the surface's member. */
export type ListPage = Record<string, unknown>;

/** The request of one page of a surface's listing. */
export function listRequest(
  surface: ListedSurface,
  cursor: string | undefined,
): { method: string; params: { cursor?: string } } {
  return { method: SURFACE_LISTINGS[surface].method, params: cursor === undefined ? {} : { cursor } };
}

/**
 * Lists every page of a surface (tools by default) through the one page loop
 * (state/collectToolPages.ts: bounded, a repeated cursor refused) and says which page failed: a
 * failed page after the first means the listing is incomplete.
 */
export async function listAllPages(
  request: (cursor: string | undefined) => Promise<ListPage>,
  maxPages: number,
  surface: ListedSurface = 'tools',
): Promise<{ items: unknown[]; pages: number }> {
  const { method, member } = SURFACE_LISTINGS[surface];
  let complete = 0;
  const pages = await collectToolPages(
    async (cursor) => {
      try {
        const page = await request(cursor);
        complete++;
        return page;
      } catch (error) {
        const where =
          complete === 0
            ? `${method} failed`
            : `page ${complete + 1} of ${method} failed after ${complete} complete page(s); the listing is incomplete`;
        throw catalogUnavailable(
          `${where}: ${describeError(error)}`,
          { stage: 'list', pages: complete },
          error,
        );
      }
    },
    { maxPages, surface },
  );
  return {
    items: pages.flatMap((page) => (page.result as Record<string, unknown[]>)[member] ?? []),
    pages: pages.length,
  };
}
