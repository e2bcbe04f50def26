import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import { isLoopbackHost, isLoopbackHostHeader } from '../wire/loopback.js';
import type { GatewayMetrics } from './metrics.js';

/** What `GET /readyz` reports; HTTP 503 unless `ready`. */
export interface ReadinessReport {
  readonly ready: boolean;
  /** `starting` until the MCP listener is bound, `draining` from SIGTERM on. */
  readonly state: 'starting' | 'ready' | 'draining';
  readonly [member: string]: unknown;
}

/** Options of {@link createAdminApp}. */
export interface AdminAppOptions {
  /**
   * The address the listener is bound to (`admin.host`): when it is this machine's, a request whose
   * `Host` names another is refused 421 before any endpoint (DNS rebinding). @default 127.0.0.1
   */
  readonly host?: string;
  /** When set, every endpoint requires `Authorization: Bearer <token>`. */
  readonly token?: string;
  readonly metrics: GatewayMetrics;
  readonly readiness: () => ReadinessReport;
  readonly status: () => unknown;
  /**
   * The review page's routes, mounted at `/ui` before the bearer check: they authenticate on their
   * own (the same token, as a bearer header or a login cookie; docs/review-ui.md).
   */
  readonly ui?: Router;
}

// Both sides are hashed first so the comparison takes the same time whatever the lengths.
/** True when `given` is the admin token (compared in constant time). */
export function sameToken(given: string, token: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** True when an `Authorization` header carries the admin token as a bearer token. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer (.+)$/i.exec(header ?? '');
  return sameToken(match?.[1] ?? '', token) && match !== null;
}

/**
 * DNS rebinding: a web page whose name was rebound to 127.0.0.1 is same-origin with a loopback
 * listener, and its GETs carry no `Origin`; only `Host` tells it apart (its own name).
 */
function refuseForeignHost(req: Request, res: Response, next: NextFunction): void {
  if (isLoopbackHostHeader(req.headers.host)) return next();
  res.status(421).json({
    error: 'misdirected_request',
    message:
      'The admin listener is bound to this machine and answers only its names (localhost, 127.0.0.1, [::1])',
  });
}

/**
 * The admin API on its own listener (loopback by default): `/healthz` (the process is up),
 * `/readyz` (config loaded, listening, not draining; each upstream's last contact), `/metrics`
 * (Prometheus text), `/status` (JSON per server: pin, last observation, per-tool state, last drift)
 * and, when given, the review page at `/ui`.
 */
export function createAdminApp(options: AdminAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (isLoopbackHost(options.host ?? '127.0.0.1')) app.use(refuseForeignHost);
  if (options.ui !== undefined) app.use('/ui', options.ui);
  if (options.token !== undefined) {
    const token = options.token;
    app.use((req: Request, res: Response, next: NextFunction) => {
      if (tokenMatches(req.headers.authorization, token)) return next();
      res
        .status(401)
        .set('www-authenticate', 'Bearer realm="toolpin-admin"')
        .json({ error: 'unauthorized', message: 'A bearer token is required' });
    });
  }
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const report = options.readiness();
    res.status(report.ready ? 200 : 503).json(report);
  });
  app.get('/metrics', (_req, res, next) => {
    options.metrics
      .render()
      .then(({ contentType, body }) => res.type(contentType).send(body))
      .catch(next);
  });
  app.get('/status', (_req, res) => {
    res.json(options.status());
  });
  app.use((req: Request, res: Response) => {
    res.status(404).json({
      error: 'not_found',
      message: `No admin endpoint at ${req.path}`,
      endpoints: ['/healthz', '/readyz', '/metrics', '/status', ...(options.ui === undefined ? [] : ['/ui'])],
    });
  });
  return app;
}
