import type { NextFunction, Request, Response } from 'express';
import { errorSummary } from '../observe/errorSummary.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError } from '../wire/jsonRpc.js';
import type { AggregateRoute, AggregateRouteOptions } from './aggregateFront.js';
import { replyJson } from './clientReply.js';

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
 * ask for `/mcp` never loads it. A module that cannot be loaded (an install missing it or the v2
 * SDK it imports) fails each request closed with a JSON-RPC error, logged with its cause (the
 * client is told no path or stack of the gateway's), and leaves the gateway's stop as it was.
 */
export function lazyAggregateRoute(options: AggregateRouteOptions): LazyAggregateRoute {
  let route: Promise<AggregateRoute> | undefined;
  const load = (): Promise<AggregateRoute> =>
    (route ??= import('./aggregateFront.js').then((front) => front.createAggregateRoute(options)));
  return {
    handle: (req, res, next) => {
      // Mounted at /mcp: only /mcp (or /mcp/) itself is the aggregate; /mcp/sse is a server named "mcp".
      if (req.path !== '/') return next();
      load().then(
        (loaded) => loaded.router(req, res, next),
        (error: unknown) => {
          options.logger.error(
            { event: 'aggregate.unavailable', err: errorSummary(error) },
            'the aggregate route /mcp could not be loaded',
          );
          replyJson(
            res,
            500,
            jsonRpcError(null, ErrorCodes.INTERNAL_ERROR, 'toolpin: the aggregate route is unavailable'),
          );
        },
      );
    },
    // A route that could not be loaded has no session to end: stopping goes on as without one.
    close: async () => {
      await (await route?.catch(() => undefined))?.close();
    },
  };
}
