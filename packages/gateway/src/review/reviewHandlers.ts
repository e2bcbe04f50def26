import { basename, relative } from 'node:path';
import type { Request, Response, Router } from 'express';
import type { ServerConfig } from '../config/index.js';
import { rewritePinFile } from '../config/rewritePinFile.js';
import { GatewayError } from '../errors.js';
import { joinDefinition } from '../explain/extraMembers.js';
import { valueAt } from '../explain/textChanges.js';
import { showText, showWordDiff } from './html.js';
import { liveItemDrift, planLiveItem, type LiveItemPlan, type ReviewedItem } from './liveItemPlan.js';
import { renderSides } from './renderReviewPage.js';
import type { Reader } from './reviewAccess.js';
import type { ReviewContext } from './reviewApp.js';

type Fields = Readonly<Record<string, unknown>>;

function field(fields: Fields, name: string): string {
  const value = fields[name];
  return typeof value === 'string' ? value : '';
}

function errorPage(context: ReviewContext, res: Response, status: number, message: string): void {
  const body = `<p class="notice error">${showText(message)}</p><main><p><a href="/ui">Back to the review page</a></p></main>`;
  context.sendPage(res, status, 'toolpin review: not done', body);
}

/** The server a request names, or an error page (404). */
function serverOf(context: ReviewContext, res: Response, fields: Fields): ServerConfig | undefined {
  const name = field(fields, 'server');
  const server = context.servers().find((candidate) => candidate.name === name);
  if (server === undefined) errorPage(context, res, 404, `No server named ${name} is routed`);
  return server;
}

/** Runs a live step; an upstream that cannot be listed, or a pin that no longer loads, is an error page. */
async function live<T>(
  context: ReviewContext,
  res: Response,
  work: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    errorPage(
      context,
      res,
      error.code === 'GW_CATALOG_UNAVAILABLE' ? 502 : 409,
      `${error.code}: ${error.message}`,
    );
    return undefined;
  }
}

function itemOf(fields: Fields): ReviewedItem {
  return { key: field(fields, 'key'), observed: field(fields, 'observed'), shown: field(fields, 'shown') };
}

/** The named server and its tool's approval planned from the live catalog, or an error page sent. */
async function planFor(
  context: ReviewContext,
  res: Response,
  fields: Fields,
): Promise<{ server: ServerConfig; planned: LiveItemPlan } | undefined> {
  const server = serverOf(context, res, fields);
  if (server === undefined) return undefined;
  const planned = await live(context, res, () => planLiveItem(server, itemOf(fields), context.timeoutMs));
  if (planned === undefined) return undefined;
  if (!planned.ok) return void errorPage(context, res, planned.status, planned.message);
  return { server, planned: planned.value };
}

async function approve(context: ReviewContext, req: Request, res: Response): Promise<void> {
  const fields = req.body as Fields;
  const found = await planFor(context, res, fields);
  if (found === undefined) return;
  const { server, planned } = found;
  const { live: catalog, plan, entry } = planned;
  const written = await live(context, res, () =>
    rewritePinFile(server.file, plan, { expected: catalog.text }),
  );
  if (written === undefined) return;
  await context.reload();
  context.logger.info(
    {
      event: 'review.approved',
      server: server.name,
      key: entry.key,
      file: server.file,
      from: catalog.server.pin.catalog,
      to: written.pin.catalog,
    },
    'approved on the review page: pin file rewritten',
  );
  context.observer.noteChange();
  res.redirect(
    303,
    `/ui?${new URLSearchParams({ notice: 'approved', item: entry.tool ?? entry.key }).toString()}`,
  );
}

function acknowledge(context: ReviewContext, req: Request, res: Response): void {
  const fields = req.body as Fields;
  const server = serverOf(context, res, fields);
  if (server === undefined) return;
  const { key, observed } = itemOf(fields);
  const status = context.observer.status.snapshot([server])[0];
  const finding = status?.lastDrift?.findings.find(
    (candidate) => candidate.key === key && (candidate.observed ?? '') === observed,
  );
  if (finding === undefined)
    return errorPage(
      context,
      res,
      409,
      'The page showed a drift the gateway no longer reports: reload the page',
    );
  if (!context.observer.acknowledgements.acknowledge(server.name, finding))
    return errorPage(context, res, 409, 'Too many acknowledged findings for this server');
  context.logger.info(
    { event: 'review.kept_blocked', server: server.name, key, observed: finding.observed },
    'drift kept blocked on the review page: its alert is not sent again',
  );
  context.observer.noteChange();
  res.redirect(
    303,
    `/ui?${new URLSearchParams({ notice: 'kept-blocked', item: finding.tool ?? key }).toString()}`,
  );
}

function writes(context: ReviewContext, handler: (req: Request, res: Response) => Promise<void> | void) {
  return (req: Request, res: Response, next: (error?: unknown) => void): void => {
    const refused = context.access.refuseWrite(req, res.locals.reader as Reader);
    if (refused !== undefined) return errorPage(context, res, 403, refused);
    Promise.resolve(handler(req, res)).catch(next);
  };
}

async function itemPage(context: ReviewContext, req: Request, res: Response): Promise<void> {
  const fields = req.query as Fields;
  const server = serverOf(context, res, fields);
  if (server === undefined) return;
  const found = await live(context, res, () =>
    liveItemDrift(server, field(fields, 'key'), context.timeoutMs),
  );
  if (found === undefined) return;
  if (!found.ok) return errorPage(context, res, found.status, found.message);
  const { live: catalog, entry } = found;
  const sideOf = (
    side: Pick<typeof catalog.observed, 'definitions' | 'extraMembers'>,
    key: string,
  ): unknown =>
    Object.hasOwn(side.definitions, key)
      ? joinDefinition(side.definitions[key] ?? {}, side.extraMembers[key])
      : undefined;
  const pinned = sideOf(catalog.server, entry.from?.key ?? entry.key);
  const observed = sideOf(catalog.observed, entry.key);
  const severity = new Map((entry.severities ?? []).map((judged) => [judged.path, judged.severity]));
  const changes = (entry.paths ?? []).map((path) => {
    const judged = severity.get(path);
    return {
      path,
      before: valueAt(pinned, path),
      after: valueAt(observed, path),
      ...(judged === undefined ? {} : { severity: judged }),
    };
  });
  const text = (entry.text ?? [])
    .map(
      (change) =>
        `<div class="worddiff"><code>${showText(change.path)}</code>: ${showWordDiff(change.ops)}</div>`,
    )
    .join('');
  const body = `<main><p><a href="/ui">Back</a></p><h2>${showText(server.name)} / ${showText(entry.tool ?? entry.key)}: ${entry.kind}, severity ${entry.severity}</h2>
<p>changed members: ${(entry.members ?? []).map((member) => `<mark>${showText(member)}</mark>`).join(', ') || '-'}</p>
${text}${renderSides(pinned, observed, changes)}</main>`;
  context.sendPage(res, 200, `toolpin review: ${entry.tool ?? entry.key}`, body);
}

/** The diff library, loaded by the first patch asked for (once: concurrent first imports race under jest). */
let diffModule: Promise<typeof import('diff')> | undefined;
function loadDiff(): Promise<typeof import('diff')> {
  diffModule ??= import('diff');
  return diffModule;
}

/** The file name a patch names: relative to the working folder when inside it (for `git apply`). */
function patchPath(file: string): string {
  const path = relative(process.cwd(), file);
  return path.startsWith('..') || path === '' ? basename(file) : path;
}

async function patch(context: ReviewContext, req: Request, res: Response): Promise<void> {
  const fields = req.query as Fields;
  const found = await planFor(context, res, fields);
  if (found === undefined) return;
  const { server, planned } = found;
  const { live: catalog, next, entry } = planned;
  const path = patchPath(server.file);
  const { createTwoFilesPatch } = await loadDiff();
  const diff = createTwoFilesPatch(`a/${path}`, `b/${path}`, catalog.text, next, undefined, undefined, {
    context: 3,
  });
  const name = `${server.name}-${entry.tool ?? entry.key}`.replace(/[^A-Za-z0-9._-]/g, '_');
  res
    .status(200)
    .set({
      'content-disposition': `attachment; filename="${name}.patch"`,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    })
    .type('text/x-diff')
    .send(diff);
}

/** Mounts the page's item view, patch download and the two writes on `router`. */
export function reviewHandlers(router: Router, context: ReviewContext): void {
  router.get('/item', (req, res, next) => void itemPage(context, req, res).catch(next));
  router.get('/patch', (req, res, next) => void patch(context, req, res).catch(next));
  router.post(
    '/approve',
    writes(context, (req, res) => approve(context, req, res)),
  );
  router.post(
    '/acknowledge',
    writes(context, (req, res) => acknowledge(context, req, res)),
  );
}
