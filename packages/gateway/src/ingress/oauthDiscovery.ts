import type { IncomingMessage, ServerResponse } from 'node:http';
import { PROTECTED_RESOURCE_PREFIX, protectedResourceMetadata } from '../auth/resourceMetadata.js';
import type { RouteAuthenticator } from './routeAuth.js';
import { replyJson } from './clientReply.js';

// The paths an OAuth client tries on the server it connects to: RFC 9728 protected resource
// metadata, RFC 8414 / OIDC authorization server metadata, and the default endpoints of an
// authorization server without metadata (MCP 2025-03-26). toolpin is never an authorization server.
const AUTHORIZATION_SERVER_PATHS = ['/register', '/authorize', '/token'];

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query < 0 ? raw : raw.slice(0, query);
}

/** The route named by a protected resource metadata path (`…/<name>/mcp`), or undefined. */
function routeOfMetadataPath(path: string): string | undefined {
  return /^\/([A-Za-z0-9._~-]+)\/mcp\/?$/.exec(path.slice(PROTECTED_RESOURCE_PREFIX.length))?.[1];
}

function notFound(res: ServerResponse, message: string, extra: Record<string, unknown> = {}): void {
  replyJson(res, 404, { error: 'not_found', message, ...extra });
}

/**
 * Answers OAuth discovery on the gateway itself, before any route: a resource-server route's
 * metadata (`/.well-known/oauth-protected-resource/<name>/mcp`, and the root form when one route
 * is a resource server), and a clear JSON 404 for everything else of `/.well-known/` and the
 * authorization server paths: nothing of them is proxied. Returns true when it answered.
 */
export function answerOAuthDiscovery(
  req: IncomingMessage,
  res: ServerResponse,
  authenticators: ReadonlyMap<string, RouteAuthenticator>,
): boolean {
  const path = pathOf(req.url);
  if (AUTHORIZATION_SERVER_PATHS.includes(path)) {
    notFound(
      res,
      "toolpin is not an authorization server: obtain tokens from the identity provider named in a route's protected resource metadata (docs/oauth.md)",
    );
    return true;
  }
  if (!path.startsWith('/.well-known/')) return false;
  if (path === PROTECTED_RESOURCE_PREFIX || path === `${PROTECTED_RESOURCE_PREFIX}/`) {
    const only = authenticators.size === 1 ? [...authenticators.values()][0] : undefined;
    if (only !== undefined) replyJson(res, 200, protectedResourceMetadata(only.config));
    else
      notFound(res, 'each resource-server route has its own metadata', {
        metadata: [...authenticators.keys()].map((name) => `${PROTECTED_RESOURCE_PREFIX}/${name}/mcp`),
      });
    return true;
  }
  const name = path.startsWith(`${PROTECTED_RESOURCE_PREFIX}/`) ? routeOfMetadataPath(path) : undefined;
  const authenticator = name === undefined ? undefined : authenticators.get(name);
  if (authenticator !== undefined) {
    replyJson(res, 200, protectedResourceMetadata(authenticator.config));
    return true;
  }
  notFound(
    res,
    name === undefined
      ? 'toolpin serves no OAuth metadata here: it is not an authorization server (docs/oauth.md)'
      : `the route /${name}/mcp is not a resource-server route: its credentials pass to the upstream as they are (transparent), and OAuth discovery cannot complete through it (docs/oauth.md)`,
  );
  return true;
}
