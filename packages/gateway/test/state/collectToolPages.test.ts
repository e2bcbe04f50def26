import { GatewayError } from '../../src/errors.js';
import { collectToolPages } from '../../src/state/collectToolPages.js';
import { listAllPages } from '../../src/transports/listAllPages.js';

/** A server's pages by cursor (the first under ''), and the cursors it was asked with. */
function pagedServer(pages: Record<string, Record<string, unknown> & { nextCursor?: string }>) {
  const asked: (string | undefined)[] = [];
  const request = (cursor: string | undefined) => {
    asked.push(cursor);
    const page = pages[cursor ?? ''];
    return page === undefined ? Promise.reject(new Error(`unknown cursor ${cursor}`)) : Promise.resolve(page);
  };
  return { asked, request };
}

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('collectToolPages, the one page loop', () => {
  it('follows nextCursor to the last page, each page with the cursor it was asked with', async () => {
    const server = pagedServer({
      '': { tools: ['a'], nextCursor: 'p2' },
      p2: { tools: ['b'], nextCursor: 'p3' },
      p3: { tools: ['c'] },
    });
    const pages = await collectToolPages(server.request, { maxPages: 10 });
    expect(pages.map((page) => page.cursor)).toEqual([undefined, 'p2', 'p3']);
    expect(server.asked).toEqual([undefined, 'p2', 'p3']);
  });

  it('refuses a server that repeats a cursor (the listing would never end), asking no page twice', async () => {
    const server = pagedServer({
      '': { tools: ['a'], nextCursor: 'p2' },
      p2: { tools: ['b'], nextCursor: 'p3' },
      p3: { tools: ['c'], nextCursor: 'p2' },
    });
    const error = await rejection(collectToolPages(server.request, { maxPages: 1000 }));
    expect(error.code).toBe('GW_CATALOG_UNAVAILABLE');
    expect(error.message).toBe('the upstream repeated the cursor "p2"; the listing never ends');
    expect(error.data).toEqual({ stage: 'list', pages: 3 });
    expect(server.asked).toEqual([undefined, 'p2', 'p3']);
  });

  it('refuses a server that lists more than maxPages pages, asking no page beyond the bound', async () => {
    let asked = 0;
    const endless = (cursor: string | undefined) => {
      asked++;
      return Promise.resolve({ tools: [], nextCursor: `${cursor ?? ''}+` });
    };
    const error = await rejection(collectToolPages(endless, { maxPages: 4 }));
    expect(error.message).toBe('the upstream listed more than 4 pages of tools; the listing is incomplete');
    expect(error.data).toEqual({ stage: 'list', pages: 4, bound: 'pages' });
    expect(asked).toBe(4);
  });

  it('takes a page without a string nextCursor as the last one', async () => {
    const server = pagedServer({ '': { tools: [], nextCursor: 7 as unknown as string } });
    expect(await collectToolPages(server.request, { maxPages: 10 })).toHaveLength(1);
    expect(await collectToolPages(() => Promise.resolve(null), { maxPages: 10 })).toEqual([
      { cursor: undefined, result: null },
    ]);
  });
});

describe('listAllPages over the one loop', () => {
  it('joins the tools of every page', async () => {
    const server = pagedServer({ '': { tools: ['a', 'b'], nextCursor: 'n' }, n: { tools: ['c'] } });
    expect(await listAllPages(server.request, 10)).toEqual({ items: ['a', 'b', 'c'], pages: 2 });
  });

  it('says which page failed after how many complete ones', async () => {
    const server = pagedServer({ '': { tools: ['a'], nextCursor: 'gone' } });
    const error = await rejection(listAllPages(server.request, 10));
    expect(error.message).toBe(
      'page 2 of tools/list failed after 1 complete page(s); the listing is incomplete: unknown cursor gone',
    );
    expect(error.data).toEqual({ stage: 'list', pages: 1 });
  });

  it('refuses a repeated cursor as the loop does', async () => {
    const server = pagedServer({
      '': { tools: ['a'], nextCursor: 'x' },
      x: { tools: ['b'], nextCursor: 'x' },
    });
    const error = await rejection(listAllPages(server.request, 10));
    expect(error.message).toMatch(/repeated the cursor "x"/);
  });

  it('pages prompts and resource templates through the same loop, naming their listing when it fails', async () => {
    const prompts = pagedServer({
      '': { tools: [], prompts: ['greet'], nextCursor: 'n' },
      n: { tools: [], prompts: ['bye'] },
    });
    expect(await listAllPages(prompts.request, 10, 'prompts')).toEqual({ items: ['greet', 'bye'], pages: 2 });
    expect(prompts.asked).toEqual([undefined, 'n']);
    const templates = pagedServer({
      '': { tools: [], resourceTemplates: ['t'], nextCursor: 'gone' },
    });
    const error = await rejection(listAllPages(templates.request, 10, 'resourceTemplates'));
    expect(error.message).toMatch(/^page 2 of resources\/templates\/list failed after 1 complete page\(s\)/);
    const endless = (cursor: string | undefined) =>
      Promise.resolve({ prompts: [], nextCursor: `${cursor ?? ''}x` });
    const bounded = await rejection(listAllPages(endless, 3, 'prompts'));
    expect(bounded.message).toBe(
      'the upstream listed more than 3 pages of prompts; the listing is incomplete',
    );
  });
});
