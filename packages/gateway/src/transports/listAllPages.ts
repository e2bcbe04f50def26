import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { describeError } from './classifyAttemptFailure.js';

// The tools are kept as sent: no SDK schema may drop or coerce a member before it is hashed.
/** One tools/list result page as the listing clients request it (tools kept as raw values). */
export const pageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
/** One tools/list result page. */
export type ListPage = z.infer<typeof pageSchema>;

/** GW_CATALOG_UNAVAILABLE: the live catalog cannot be listed whole. */
export function catalogUnavailable(
  message: string,
  data: Record<string, unknown>,
  cause?: unknown,
): GatewayError {
  return new GatewayError(
    'GW_CATALOG_UNAVAILABLE',
    message,
    data,
    cause === undefined ? undefined : { cause },
  );
}

/** Follows nextCursor until the last page; a failed page after the first means the listing is incomplete. */
export async function listAllPages(
  request: (cursor: string | undefined) => Promise<ListPage>,
  maxPages: number,
): Promise<{ tools: unknown[]; pages: number }> {
  const tools: unknown[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  do {
    if (pages >= maxPages)
      throw catalogUnavailable(
        `the server listed more than ${maxPages} pages of tools; the listing is incomplete`,
        { stage: 'list', pages },
      );
    let page: ListPage;
    try {
      page = await request(cursor);
    } catch (error) {
      const where =
        pages === 0
          ? 'tools/list failed'
          : `page ${pages + 1} of tools/list failed after ${pages} complete page(s); the listing is incomplete`;
      throw catalogUnavailable(`${where}: ${describeError(error)}`, { stage: 'list', pages }, error);
    }
    tools.push(...page.tools);
    pages++;
    cursor = page.nextCursor;
    if (cursor !== undefined && seen.has(cursor))
      throw catalogUnavailable(
        `the server repeated the cursor ${JSON.stringify(cursor)}; the listing never ends`,
        { stage: 'list', pages },
      );
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor !== undefined);
  return { tools, pages };
}
