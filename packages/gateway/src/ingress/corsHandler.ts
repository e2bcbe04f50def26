import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import type { CorsConfig } from '../config/index.js';
import type { GatewayLogger } from '../observe/logger.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { headerValue } from '../wire/httpHeaders.js';
import { jsonRpcError } from '../wire/jsonRpc.js';
import { isLoopbackUrl } from '../wire/loopback.js';
import { replyJson } from './clientReply.js';
import { MCP_METHODS } from './requestBoundary.js';

/** Request headers a browser client may send: MCP's own, its credentials, and 2026-07-28's routing headers. */
export const CORS_ALLOWED_HEADERS: readonly string[] = [
  'Content-Type',
  'Accept',
  'Authorization',
  'Mcp-Session-Id',
  'MCP-Protocol-Version',
  'Last-Event-ID',
  'Mcp-Method',
  'Mcp-Name',
];

/** Response headers a browser client may read: the session, the protocol revision, the auth challenge. */
export const CORS_EXPOSED_HEADERS: readonly string[] = [
  'Mcp-Session-Id',
  'MCP-Protocol-Version',
  'WWW-Authenticate',
];

/**
 * Answers what a request needs before it reaches a route: true when it was answered here (a
 * preflight, or a refused origin), false when it goes on (with the CORS headers set, if any).
 */
export type CorsHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * The gateway file's `cors` block, applied to every MCP route before anything else: a request
 * without `Origin` is not a browser's cross-origin request and goes on untouched. From an allowed
 * origin, a preflight (OPTIONS with `Access-Control-Request-Method`) is answered 204 with the
 * `Access-Control-*` headers (the `cors` package's), and any other request goes on with
 * `Access-Control-Allow-Origin` (and `-Credentials`, `-Expose-Headers`) set. From any other origin,
 * every request is refused 403 (a JSON-RPC `-32600`, logged as `request.rejected`): the MCP
 * transport asks servers to validate `Origin`, which is what stops DNS rebinding.
 */
export function createCorsHandler(config: CorsConfig, logger: GatewayLogger): CorsHandler {
  const anyOrigin = config.origins.includes('*');
  const origins = new Set(config.origins);
  const middleware = cors({
    // The origin is checked before the middleware runs: it reflects the one allowed.
    origin: true,
    methods: MCP_METHODS,
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    credentials: config.credentials,
    maxAge: config.maxAgeSeconds,
  });
  return (req, res) => {
    const origin = headerValue(req.headers, 'origin');
    if (origin === undefined) return false;
    if (!anyOrigin && !origins.has(origin)) {
      refuseOrigin(req, res, origin, logger);
      return true;
    }
    // An OPTIONS without Access-Control-Request-Method is no preflight (the package would answer
    // it as one): the boundary refuses it (405).
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] === undefined) return false;
    let goesOn = false;
    middleware(req, res, () => (goesOn = true));
    return !goesOn;
  };
}

/**
 * Without a `cors` block: a request whose `Origin` is not on this machine is refused 403. A
 * browser never gets past the preflight (405) from another origin, except a page whose name was
 * rebound to the gateway's address (DNS rebinding), which the browser treats as same-origin: the
 * MCP transport asks servers to validate `Origin` for exactly this. No Origin (every non-browser
 * client) and loopback origins (a local inspector) go on untouched.
 */
export function createOriginCheck(logger: GatewayLogger): CorsHandler {
  return (req, res) => {
    const origin = headerValue(req.headers, 'origin');
    // An OPTIONS is refused by the boundary (405) and never reaches the upstream.
    if (origin === undefined || req.method === 'OPTIONS' || isLoopbackUrl(origin)) return false;
    refuseOrigin(
      req,
      res,
      origin,
      logger,
      'is not on this machine, and the gateway has no cors block to allow it',
    );
    return true;
  };
}

function refuseOrigin(
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
  logger: GatewayLogger,
  why = "is not in the gateway's cors.origins",
): void {
  const message = `Forbidden: origin ${JSON.stringify(origin)} ${why}`;
  logger.warn({ event: 'request.rejected', method: req.method, origin, status: 403, err: message }, message);
  replyJson(res, 403, jsonRpcError(null, ErrorCodes.INVALID_REQUEST, message));
}
