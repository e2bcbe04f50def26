import type { IncomingMessage, ServerResponse } from 'node:http';
import { TokenRefusal, TokenVerifier, type Principal } from '../auth/tokenVerifier.js';
import { issuerMetadataOnce } from '../auth/issuerMetadata.js';
import { bearerChallenge } from '../auth/resourceMetadata.js';
import { UpstreamCredentials } from '../auth/upstreamCredentials.js';
import type { ResourceServerAuthConfig, ServerConfig } from '../config/index.js';
import { isStdioUpstream } from '../config/index.js';
import { GatewayError } from '../errors.js';
import type { GatewayLogger } from '../observe/logger.js';
import { upstreamFailureOf } from '../transports/exchange.js';
import { replyJson } from './clientReply.js';
import { setPrincipal } from './requestPrincipal.js';
import { SessionOwners } from './sessionOwners.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError } from '../wire/jsonRpc.js';

// The requests a route has admitted: one request passes one admission (a path a route hands on
// to the next one is not verified twice, its Authorization being the upstream's by then).
const admitted = new WeakSet<IncomingMessage>();

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The access token of a request's Authorization header; undefined without one, null when malformed. */
function bearerOf(req: IncomingMessage): string | undefined | null {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1] ?? null;
}

/** True when the URL's query carries an access token (RFC 6750 §2.3, forbidden by the MCP authorization spec). */
function tokenInQuery(url: string | undefined): boolean {
  const query = url?.indexOf('?') ?? -1;
  return query >= 0 && new URLSearchParams(url!.slice(query + 1)).has('access_token');
}

/**
 * The gate of one resource-server route, before anything else of every HTTP front of it: the
 * bearer token is verified (TokenVerifier), then the request's credential becomes the upstream's
 * (UpstreamCredentials): the client's Authorization is replaced, or removed, unless `forward`.
 * A refusal is the route's own challenge (401/403 with its resource_metadata and scope).
 */
export class RouteAuthenticator {
  readonly config: ResourceServerAuthConfig;
  readonly #server: string;
  readonly #logger: GatewayLogger;
  readonly #verifier: TokenVerifier;
  readonly #credentials: UpstreamCredentials;
  readonly #sessions = new SessionOwners();

  constructor(server: ServerConfig, config: ResourceServerAuthConfig, logger: GatewayLogger) {
    this.config = config;
    this.#server = server.name;
    this.#logger = logger;
    const metadata = issuerMetadataOnce(config.issuer);
    this.#verifier = new TokenVerifier(config, metadata);
    const upstreamUrl = isStdioUpstream(server.upstream) ? undefined : server.upstream.url;
    this.#credentials = new UpstreamCredentials(server.name, config, upstreamUrl, metadata);
  }

  /** Verifies the request and calls `next` once it may go on; otherwise answers it. */
  admit(req: IncomingMessage, res: ServerResponse, next: () => void): void {
    if (admitted.has(req)) return next();
    if (tokenInQuery(req.url))
      return this.#refuse(
        res,
        new TokenRefusal('invalid_request', 'access tokens are accepted in the Authorization header only'),
      );
    const token = bearerOf(req);
    if (token === undefined) return this.#challenge(res);
    if (token === null)
      return this.#refuse(
        res,
        new TokenRefusal('invalid_request', 'the Authorization header is not a Bearer token'),
      );
    this.#admitToken(req, res, token).then(
      (admit) => {
        if (admit) next();
      },
      (error: unknown) => this.#failed(res, error),
    );
  }

  async #admitToken(req: IncomingMessage, res: ServerResponse, token: string): Promise<boolean> {
    let principal: Principal;
    try {
      principal = await this.#verifier.verify(token);
    } catch (error) {
      if (!(error instanceof TokenRefusal)) throw error;
      this.#refuse(res, error);
      return false;
    }
    const owner = `${principal.issuer} ${principal.subject}`;
    if (!this.#sessions.allows(req.headers['mcp-session-id'], owner)) {
      // Another principal's session: as if it did not exist.
      this.#logger.warn(
        { event: 'auth.session_refused', server: this.#server },
        "a request carried another principal's MCP session id: answered 404",
      );
      replyJson(res, 404, jsonRpcError(null, ErrorCodes.SESSION_NOT_FOUND, 'Session not found'));
      return false;
    }
    this.#sessions.recordIssued(res, owner);
    const credential = await this.#credentials.credentialFor(principal, token);
    if (!credential.forwardsClientToken) delete req.headers.authorization;
    Object.assign(req.headers, credential.headers);
    setPrincipal(req.headers, owner, principal);
    admitted.add(req);
    return true;
  }

  /** No credentials at all: the challenge alone (RFC 6750 §3.1: no error code). */
  #challenge(res: ServerResponse): void {
    this.#logger.info(
      { event: 'auth.challenged', server: this.#server },
      'a request without a token: challenged',
    );
    res.setHeader('www-authenticate', bearerChallenge(this.config));
    replyJson(res, 401, { error: 'unauthorized', error_description: 'this route needs a bearer token' });
  }

  #refuse(res: ServerResponse, refusal: TokenRefusal): void {
    const status =
      refusal.error === 'insufficient_scope' ? 403 : refusal.error === 'invalid_request' ? 400 : 401;
    this.#logger.warn(
      { event: 'auth.refused', server: this.#server, error: refusal.error, reason: refusal.message },
      'a bearer token was refused',
    );
    const description = refusal.message;
    res.setHeader('www-authenticate', bearerChallenge(this.config, { error: refusal.error, description }));
    replyJson(res, status, { error: refusal.error, error_description: description });
  }

  /** The provider or the upstream credential failed: fail closed, nothing goes upstream. */
  #failed(res: ServerResponse, error: unknown): void {
    const known = error instanceof GatewayError ? error : undefined;
    this.#logger.error(
      {
        event: 'auth.failed',
        server: this.#server,
        code: known?.code,
        err: known?.message ?? 'internal error',
      },
      'a request could not be authenticated',
    );
    if (res.headersSent) return void res.end();
    if (known?.code === 'GW_UPSTREAM_CREDENTIAL') {
      const message = `toolpin: no credential for the upstream of ${this.#server}: ${known.message}`;
      return replyJson(res, 502, upstreamFailureOf(this.#server, null, 'upstream_auth', message));
    }
    replyJson(res, 503, {
      error: 'temporarily_unavailable',
      error_description: 'the identity provider could not be reached to verify the token',
    });
  }
}
