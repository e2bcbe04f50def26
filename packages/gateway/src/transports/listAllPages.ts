import { z } from 'zod';
import { catalogUnavailable, collectToolPages } from '../state/collectToolPages.js';
import { describeError } from './classifyAttemptFailure.js';

// The tools are kept as sent: no SDK schema may drop or coerce a member before it is hashed.
/** One tools/list result page as the listing clients request it (tools kept as raw values). */
export const pageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
/** One tools/list result page. */
export type ListPage = z.infer<typeof pageSchema>;

/**
 * Lists every page through the one page loop (state/collectToolPages.ts: bounded, a repeated
 * cursor refused) and says which page failed: a failed page after the first means the listing is
 * incomplete.
 */
export async function listAllPages(
  request: (cursor: string | undefined) => Promise<ListPage>,
  maxPages: number,
): Promise<{ tools: unknown[]; pages: number }> {
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
            ? 'tools/list failed'
            : `page ${complete + 1} of tools/list failed after ${complete} complete page(s); the listing is incomplete`;
        throw catalogUnavailable(
          `${where}: ${describeError(error)}`,
          { stage: 'list', pages: complete },
          error,
        );
      }
    },
    { maxPages },
  );
  return { tools: pages.flatMap((page) => (page.result as ListPage).tools), pages: pages.length };
}
