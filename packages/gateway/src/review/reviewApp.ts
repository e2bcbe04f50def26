import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { AdminUiMode, ServerConfig } from '../config/index.js';
import type { GatewayObserver } from '../observe/gatewayObserver.js';
import type { GatewayLogger } from '../observe/logger.js';
import { showText } from './html.js';
import { renderServers, renderShell, reviewCsp } from './renderReviewPage.js';
import { ReviewAccess, type Reader } from './reviewAccess.js';
import { ReviewEvents } from './reviewEvents.js';
import { reviewHandlers } from './reviewHandlers.js';
import { reviewServers } from './reviewModel.js';
import { ReviewSessions, sameOriginRequest } from './reviewSessions.js';

/** Options of {@link createReviewApp}. */
export interface ReviewAppOptions {
  /** `admin.ui` (not `off`). */
  readonly mode: Exclude<AdminUiMode, 'off'>;
  /** `admin.token`: without it the page is read-only. */
  readonly token?: string;
  /** Where the page reads the status: the gateway's observer, or `toolpin review`'s own listings. */
  readonly observer: ReviewObserver;
  readonly logger: GatewayLogger;
  /** The servers routed now (the pins in force). */
  readonly servers: () => readonly ServerConfig[];
  /** Bound of the live listing an approval, a side-by-side view or a patch makes. */
  readonly timeoutMs: number;
  /** Reloads the pin files now (after an approval: the next decision uses the new pin). */
  readonly reload: () => Promise<unknown>;
}

/** What the page reads and notes: a gateway's observer has it all; `toolpin review` has its LiveListings. */
export type ReviewObserver = Pick<
  GatewayObserver,
  'status' | 'activity' | 'acknowledgements' | 'onChange' | 'noteChange'
> &
  Partial<Pick<GatewayObserver, 'scopesOn'>>;

/** The review page's routes, and what ends its live streams. */
export interface ReviewApp {
  readonly router: Router;
  /**
   * A one-time sign-in link (`/ui/login?ticket=…`, valid 5 minutes): what `toolpin review` opens in
   * the browser, so its person is signed in without typing the token. Only the process that
   * serves the page can make one.
   */
  signInLink(): string;
  close(): void;
}

/** What a handler of the page needs. */
export interface ReviewContext extends ReviewAppOptions {
  readonly access: ReviewAccess;
  /** The servers section for a reader. */
  section(reader: Reader): string;
  /** Sends a whole page under the page's CSP. */
  sendPage(res: Response, status: number, title: string, body: string, live?: boolean): void;
}

function secure(res: Response, nonce: string): void {
  res.set({
    'content-security-policy': reviewCsp(nonce),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    // same-origin, not no-referrer: with no-referrer a form's POST says `Origin: null`.
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
  });
}

function loginPage(context: ReviewContext, res: Response, status: number, error?: string): void {
  const body = `<main><form method="post" action="/ui/login"><h2>Sign in</h2>
<p>The admin listener requires its token (<code>admin.token</code>).</p>
${error === undefined ? '' : `<p class="notice error">${showText(error)}</p>`}
<label>Admin token <input type="password" name="token" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form></main>`;
  context.sendPage(res, status, 'toolpin review: sign in', body);
}

function contextOf(options: ReviewAppOptions, access: ReviewAccess): ReviewContext {
  return {
    ...options,
    access,
    section: (reader) =>
      renderServers(
        reviewServers(
          options.servers(),
          options.observer.status.snapshot(options.servers()),
          options.observer,
        ),
        access.actionsFor(reader),
      ),
    sendPage(res, status, title, body, live = false) {
      const nonce = randomBytes(16).toString('base64');
      secure(res, nonce);
      res
        .status(status)
        .type('html')
        .send(renderShell(title, body, nonce, live));
    },
  };
}

const NOTICES: Readonly<Record<string, string>> = {
  approved: 'Approved: the pin file was rewritten and reloaded',
  'kept-blocked': 'Kept blocked: the alert is not sent again until the definition changes',
};

function indexPage(context: ReviewContext, req: Request, res: Response, reader: Reader): void {
  const notice = NOTICES[String(req.query.notice ?? '')];
  const item = typeof req.query.item === 'string' ? `: ${req.query.item}` : '';
  const body = `${notice === undefined ? '' : `<p class="notice">${showText(notice + item)}</p>`}
<main id="servers">${context.section(reader)}</main>`;
  context.sendPage(res, 200, 'toolpin review', body, true);
}

function signIn(context: ReviewContext, sessions: ReviewSessions, req: Request, res: Response): void {
  if (!context.access.signsIn) return void res.redirect(303, '/ui');
  // Login CSRF: another site must not sign a browser in (to the attacker's view of the page).
  if (!sameOriginRequest(req)) return loginPage(context, res, 403, 'Sign in from the review page itself.');
  const given = (req.body as { token?: unknown } | undefined)?.token;
  if (!context.access.isToken(given)) return loginPage(context, res, 401, 'That is not the admin token.');
  res.set('set-cookie', sessions.cookie(sessions.create())).redirect(303, '/ui');
}

/**
 * The review page (docs/review-ui.md), mounted at `/ui` on the admin listener: the servers and
 * their items (HTML that reads without JavaScript), live updates over SSE (`/ui/events`), a tool's
 * pinned and observed definitions side by side (`/ui/item`), its approval as a patch
 * (`/ui/patch`), and the writes `POST /ui/approve` and `POST /ui/acknowledge`.
 */
export function createReviewApp(options: ReviewAppOptions): ReviewApp {
  const sessions = new ReviewSessions();
  const access = new ReviewAccess(options.mode, options.token, sessions);
  const context = contextOf(options, access);
  const events = new ReviewEvents();
  const stop = options.observer.onChange(() => events.changed());
  const router = express.Router();
  router.use(express.urlencoded({ extended: false, limit: '16kb' }));
  router.get('/login', (req, res) => {
    if (!access.signsIn) return res.redirect(303, '/ui');
    const ticket = req.query.ticket;
    if (typeof ticket !== 'string') return loginPage(context, res, 200);
    if (!sessions.redeem(ticket))
      return loginPage(context, res, 401, 'That sign-in link was used already or has expired.');
    res.set('set-cookie', sessions.cookie(sessions.create())).redirect(303, '/ui');
  });
  router.post('/login', (req, res) => signIn(context, sessions, req, res));
  router.use((req: Request, res: Response, next: NextFunction) => {
    const reader = access.readerOf(req);
    if (reader !== undefined) {
      res.locals.reader = reader;
      return next();
    }
    if (req.method === 'GET' && req.path === '/') return void res.redirect(303, '/ui/login');
    res.status(401).set('www-authenticate', 'Bearer realm="toolpin-admin"').json({
      error: 'unauthorized',
      message: 'The admin token is required (a bearer header, or sign in at /ui/login)',
    });
  });
  router.get('/', (req, res) => indexPage(context, req, res, res.locals.reader as Reader));
  router.get('/events', (_req, res) => {
    const reader = res.locals.reader as Reader;
    if (!events.open(res, () => context.section(reader))) res.status(503).json({ error: 'too_many_streams' });
  });
  reviewHandlers(router, context);
  return {
    router,
    signInLink: () => `/ui/login?${new URLSearchParams({ ticket: sessions.ticket() }).toString()}`,
    close() {
      stop();
      events.close();
    },
  };
}
