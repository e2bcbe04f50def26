import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../../src/errors.js';
import { collectToolPages } from '../../src/state/collectToolPages.js';
import { fetchToolPages } from '../../src/state/fetchToolPages.js';
import type { PageBudget } from '../../src/state/listingBudget.js';
import { SURFACE_LISTINGS } from '../../src/wire/listedSurfaces.js';

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

/** Endless pages: page n names cursor n+1, with `pad` characters the client does not use. */
function endlessPage(cursor: string | undefined, pad = 0): Record<string, unknown> {
  return { tools: [], nextCursor: String(Number(cursor ?? 0) + 1), pad: 'p'.repeat(pad) };
}

describe('collectToolPages bounds a whole listing', () => {
  it('refuses the listing past its byte bound, counted by the page reader, asking no page beyond', async () => {
    const asked: (string | undefined)[] = [];
    const error = await rejection(
      collectToolPages(
        async (cursor, budget) => {
          asked.push(cursor);
          // A reader counts the bytes as they come: 400 per page here.
          for (let chunk = 0; chunk < 4; chunk++) budget.count(100);
          return endlessPage(cursor);
        },
        { maxPages: 1000, maxBytes: 1000 },
      ),
    );
    expect(error.code).toBe('GW_CATALOG_UNAVAILABLE');
    expect(error.message).toBe("the upstream's tools/list pages exceed 1000 bytes in all");
    expect(error.data).toEqual({ bound: 'bytes', pages: 3 });
    expect(asked).toEqual([undefined, '1', '2']);
  });

  it('counts a page whose reader cannot count bytes by its result as JSON', async () => {
    const asked: (string | undefined)[] = [];
    const error = await rejection(
      collectToolPages(
        (cursor) => {
          asked.push(cursor);
          return Promise.resolve(endlessPage(cursor, 4000));
        },
        { maxPages: 1000, maxBytes: 10_000 },
      ),
    );
    expect(error.data).toEqual({ bound: 'bytes', pages: 3 });
    expect(asked).toHaveLength(3);
  });

  it('keeps the page bound', async () => {
    const error = await rejection(
      collectToolPages((cursor) => Promise.resolve(endlessPage(cursor)), { maxPages: 5 }),
    );
    expect(error.message).toBe('the upstream listed more than 5 pages of tools; the listing is incomplete');
    expect(error.data).toEqual({ stage: 'list', pages: 5, bound: 'pages' });
  });

  it('refuses the listing when its time is up, aborting the page in flight and not waiting for it', async () => {
    const budgets: PageBudget[] = [];
    const error = await rejection(
      collectToolPages(
        (cursor, budget) => {
          budgets.push(budget);
          // The first page answers at once; the second never does (nor honours the signal).
          return cursor === undefined ? Promise.resolve(endlessPage(cursor)) : new Promise(() => undefined);
        },
        { maxPages: 1000, timeoutMs: 50 },
      ),
    );
    expect(error.message).toBe("the upstream's tools/list took longer than 50 ms in all");
    expect(error.data).toEqual({ bound: 'time', pages: 1 });
    expect(budgets.map((budget) => budget.signal?.aborted)).toEqual([true, true]);
  });

  it('returns every page of a listing within its bounds', async () => {
    const pages = await collectToolPages(
      (cursor) => Promise.resolve(cursor === '2' ? { tools: ['c'] } : endlessPage(cursor)),
      { maxPages: 3, maxBytes: 1000, timeoutMs: 60_000 },
    );
    expect(pages.map((page) => page.cursor)).toEqual([undefined, '1', '2']);
  });
});

describe('fetchToolPages (fetch on miss) against a real upstream', () => {
  let server: Server;
  let url: string;
  let answered = 0;

  beforeAll(async () => {
    // Every page answers within the per-request time, after 40 ms, and names a next one: only a
    // bound on the whole listing ends it before 1000 pages.
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const request = JSON.parse(body) as { id: string; params: { cursor?: string } };
        setTimeout(() => {
          answered++;
          const text = JSON.stringify({
            jsonrpc: '2.0',
            id: request.id,
            result: endlessPage(request.params.cursor),
          });
          res.writeHead(200, { 'content-type': 'application/json' }).end(text);
        }, 40);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('gives the whole listing timeoutMs, not each page', async () => {
    const error = await rejection(fetchToolPages({ url, headers: {}, stateless: false, timeoutMs: 300 }));
    expect(error.message).toBe("the upstream's tools/list took longer than 300 ms in all");
    expect(error.data).toEqual({ bound: 'time', pages: expect.any(Number) });
    expect(answered).toBeLessThan(20);
  });
});

describe('fetchToolPages lists the surface it is asked for', () => {
  it('sends prompts/list (body and Mcp-Method header) with the gateway’s own id, and returns its pages', async () => {
    const seen: { method: unknown; header: unknown; id: unknown }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const request = JSON.parse(body) as { id: string; method: string };
        seen.push({ method: request.method, header: req.headers['mcp-method'], id: request.id });
        const text = JSON.stringify({
          jsonrpc: '2.0',
          id: request.id,
          result: { prompts: [{ name: 'greet' }] },
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const pages = await fetchToolPages({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
        headers: {},
        stateless: true,
        listing: SURFACE_LISTINGS.prompts,
        timeoutMs: 5000,
      });
      expect(pages).toEqual([{ cursor: undefined, result: { prompts: [{ name: 'greet' }] } }]);
      expect(seen).toEqual([
        { method: 'prompts/list', header: 'prompts/list', id: expect.stringMatching(/^toolpin-/) },
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
