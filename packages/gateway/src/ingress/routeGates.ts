import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  isStdioUpstream,
  resourceServerAuthOf,
  upstreamIdentity,
  type ServerConfig,
} from '../config/index.js';
import { checkForwardedUpstream } from './forwardedUpstream.js';
import type { GatewayLogger } from '../observe/logger.js';
import { answerOAuthDiscovery } from './oauthDiscovery.js';
import { RouteAuthenticator } from './routeAuth.js';
import type { PrincipalGate } from './principalGate.js';

/**
 * The authenticators of a gateway's resource-server routes, by server name (docs/oauth.md): every
 * front of such a route admits a request through it before anything else; transparent routes
 * have none. Also answers OAuth discovery on the gateway (answerOAuthDiscovery).
 */
export class RouteGates {
  readonly #logger: GatewayLogger;
  readonly #gates = new Map<string, { readonly key: string; readonly authenticator: RouteAuthenticator }>();
  readonly #authenticators = new Map<string, RouteAuthenticator>();
  readonly #principals: PrincipalGate | undefined;

  /** `principals`: who each admitted request speaks for (docs/scopes.md), after its token is verified. */
  constructor(logger: GatewayLogger, principals?: PrincipalGate) {
    this.#logger = logger;
    this.#principals = principals;
  }

  /**
   * Puts a server's auth block in force; an unchanged block keeps its caches (JWKS, upstream
   * tokens). A new `forward` route is compared with its upstream's own metadata (a warning).
   */
  update(server: ServerConfig): void {
    const auth = resourceServerAuthOf(server.auth);
    if (auth === undefined) return this.remove(server.name);
    const key = JSON.stringify([auth, upstreamIdentity(server.upstream)]);
    if (this.#gates.get(server.name)?.key === key) return;
    const authenticator = new RouteAuthenticator(server, auth, this.#logger);
    this.#gates.set(server.name, { key, authenticator });
    this.#authenticators.set(server.name, authenticator);
    if (auth.upstreamCredential.kind === 'forward' && !isStdioUpstream(server.upstream))
      void checkForwardedUpstream(server.name, server.upstream.url, auth, this.#logger).catch(
        () => undefined,
      );
  }

  remove(name: string): void {
    this.#gates.delete(name);
    this.#authenticators.delete(name);
  }

  /**
   * Runs `go` once server `name`'s route admits the request (at once on a transparent route without
   * scopes): its token verified, then its principal known.
   */
  admit(name: string, req: IncomingMessage, res: ServerResponse, go: () => void): void {
    const principals = this.#principals;
    const then = principals === undefined ? go : (): void => principals.admit(name, req, res, go);
    const authenticator = this.#authenticators.get(name);
    if (authenticator === undefined) then();
    else authenticator.admit(req, res, then);
  }

  /** Answers `/.well-known/…` and the authorization server paths; true when it answered. */
  answerDiscovery(req: IncomingMessage, res: ServerResponse): boolean {
    return answerOAuthDiscovery(req, res, this.#authenticators);
  }
}
