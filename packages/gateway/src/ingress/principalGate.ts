import type { IncomingMessage, ServerResponse } from 'node:http';
import { PRINCIPAL_KEY_HEADER } from '../defaults.js';
import type { GatewayLogger } from '../observe/logger.js';
import type { PrincipalEvidence } from '../policy/principalScopes.js';
import type { ScopeTable } from '../state/scopeTable.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { jsonRpcError } from '../wire/jsonRpc.js';
import { AGGREGATE } from './aggregateRoute.js';
import { replyJson } from './clientReply.js';
import { scopePrincipalOf, setScopePrincipal, verifiedTokenOf } from './requestPrincipal.js';
import { SessionOwners } from './sessionOwners.js';

/**
 * Who an HTTP request speaks for, while the gateway file has a `principals` block (docs/scopes.md):
 * the token its resource-server route verified, else the API key of its `X-Toolpin-Key` header
 * (removed from the request: it never reaches an upstream, a log or a session key). The principal
 * is recorded on the request (scopePrincipalOf) and its session key begins with it; a request no
 * principal matches is refused, 403 (fail closed). Without a `principals` block, nothing happens.
 */
export class PrincipalGate {
  readonly #table: ScopeTable;
  readonly #logger: GatewayLogger;
  /** Per route: the principal each MCP session id belongs to (ids are the upstream's, so per route). */
  readonly #owners = new Map<string, SessionOwners>();

  constructor(table: ScopeTable, logger: GatewayLogger) {
    this.#table = table;
    this.#logger = logger;
  }

  /** Runs `go` once the request's principal is known (at once without scopes); `route`: the server, or "aggregate". */
  admit(route: string, req: IncomingMessage, res: ServerResponse, go: () => void): void {
    const scopes = this.#table.scopes;
    // One request passes one admission (a path a route hands on is not resolved again).
    if (scopes === undefined || scopePrincipalOf(req.headers) !== undefined) return go();
    const evidence = evidenceOf(req);
    const name = scopes.resolve(evidence);
    // A server no entry of the principal's names is not in its scope at all: its route is closed to
    // it (resources, and any method that names no item, would otherwise reach the upstream).
    if (name !== undefined && (route === AGGREGATE || scopes.seesServer(name, route))) {
      if (!this.#ownsSession(route, name, req, res)) return;
      setScopePrincipal(req.headers, name);
      return go();
    }
    this.#logger.warn(
      {
        event: name === undefined ? 'principal.unresolved' : 'principal.server_out_of_scope',
        server: route,
        ...(name === undefined ? {} : { principal: name }),
        // What the request showed, never its value.
        evidence: Object.keys(evidence),
      },
      name === undefined
        ? 'a request matches no principal of the gateway file: refused'
        : "a request to a server out of its principal's scope: refused",
    );
    const message =
      name === undefined
        ? 'toolpin refused the request: it matches no principal of the gateway (send the API key in X-Toolpin-Key, or a token a principal names)'
        : `toolpin refused the request: server ${route} is not in the scope of principal ${name}`;
    replyJson(
      res,
      403,
      jsonRpcError(null, ErrorCodes.PIN_POLICY_BLOCKED, message, {
        reason: 'not_in_scope',
        server: route,
        tool: null,
        principal: name ?? null,
      }),
    );
  }

  /** Records a session id `route`'s upstream issued to the gateway's own client: no principal may use it. */
  reserveSession(route: string, sessionId: string): void {
    this.#ownersOf(route).reserve(sessionId);
  }

  #ownersOf(route: string): SessionOwners {
    let owners = this.#owners.get(route);
    if (owners === undefined) this.#owners.set(route, (owners = new SessionOwners()));
    return owners;
  }

  /**
   * An MCP session belongs to the principal it was issued to (or that first used it here): another
   * principal's request carrying its id is answered 404, as if it did not exist, on every route. The
   * upstream sees no principal (the key never reaches it), so only the gateway can tell them apart.
   */
  #ownsSession(route: string, name: string, req: IncomingMessage, res: ServerResponse): boolean {
    const owners = this.#ownersOf(route);
    if (owners.allows(req.headers['mcp-session-id'], name)) {
      owners.recordIssued(res, name);
      return true;
    }
    this.#logger.warn(
      { event: 'principal.session_refused', server: route, principal: name },
      "a request carried another principal's MCP session id: answered 404",
    );
    replyJson(res, 404, jsonRpcError(null, ErrorCodes.SESSION_NOT_FOUND, 'Session not found'));
    return false;
  }
}

/** What the request shows of its principal; its API key header is taken off it. */
function evidenceOf(req: IncomingMessage): PrincipalEvidence {
  const header = req.headers[PRINCIPAL_KEY_HEADER];
  delete req.headers[PRINCIPAL_KEY_HEADER];
  // A repeated header is no key (node joins most repeated headers with ", ").
  const apiKey = typeof header === 'string' && header !== '' ? header : undefined;
  const token = verifiedTokenOf(req.headers);
  return {
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(token === undefined
      ? {}
      : {
          token: {
            issuer: token.issuer,
            subject: token.subject,
            scopes: token.scopes,
            ...(token.clientId === undefined ? {} : { clientId: token.clientId }),
          },
        }),
  };
}
