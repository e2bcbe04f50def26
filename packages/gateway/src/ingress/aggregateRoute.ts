import type { NextFunction, Request, Response } from 'express';
import type { AggregateRoute, AggregateRouteOptions } from './aggregateFront.js';

/** The name the aggregate goes by in refusals and log lines (never a server's: `/mcp` is no server's route). */
export const AGGREGATE = 'aggregate';

/** The aggregate route `/mcp`, its module (and the v2 server SDK it carries) loaded by its first request. */
export interface LazyAggregateRoute {
  /** Serves a request mounted at `/mcp`: `/mcp` itself, anything below it is passed on. */
  readonly handle: (req: Request, res: Response, next: NextFunction) => void;
  /** Ends every aggregate session (their members' children are stopped). */
  readonly close: () => Promise<void>;
}

/**
 * The aggregate route of a gateway file with an `aggregate` block: a gateway whose clients never
 * ask for `/mcp` never loads it.
 */
export function lazyAggregateRoute(options: AggregateRouteOptions): LazyAggregateRoute {
  let route: Promise<AggregateRoute> | undefined;
  const load = (): Promise<AggregateRoute> =>
    (route ??= import('./aggregateFront.js').then((front) => front.createAggregateRoute(options)));
  return {
    handle: (req, res, next) => {
      // Mounted at /mcp: only /mcp (or /mcp/) itself is the aggregate; /mcp/sse is a server named "mcp".
      if (req.path !== '/') return next();
      load().then((loaded) => loaded.router(req, res, next), next);
    },
    close: async () => {
      if (route !== undefined) await (await route).close();
    },
  };
}
