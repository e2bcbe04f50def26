import { randomUUID } from 'node:crypto';
import express from 'express';
import type { Response as ExpressResponse } from 'express';
import { DemoInMemoryAuthProvider } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from '@modelcontextprotocol/sdk/server/auth/provider.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { resourceUrlFromServerUrl } from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { listenOnLoopback, type LoopbackServer } from '../peers/listen.js';

/** An access or refresh token the test authorization server issued. */
interface Issued {
  readonly clientId: string;
  readonly resource: URL | undefined;
  readonly scopes: string[];
  expiresAt: number;
}

/**
 * The SDK example's authorization server (DemoInMemoryAuthProvider: its clients, its authorize
 * step that redirects without a page, its code exchange with the strict resource check), with
 * refresh tokens added: the example issues none, and the client mode's refresh is under test.
 */
class RefreshingDemoProvider implements OAuthServerProvider {
  readonly demo: DemoInMemoryAuthProvider;
  readonly access = new Map<string, Issued>();
  readonly refresh = new Map<string, Issued>();
  /** Every grant asked for at the token endpoint, in order. */
  readonly grants: string[] = [];

  constructor(private readonly expectedResource: URL) {
    this.demo = new DemoInMemoryAuthProvider((resource) => resource?.href === expectedResource.href);
  }

  get clientsStore() {
    return this.demo.clientsStore;
  }

  authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: ExpressResponse) {
    return this.demo.authorize(client, params, res);
  }

  challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string) {
    return this.demo.challengeForAuthorizationCode(client, code);
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    verifier?: string,
    _redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    this.grants.push('authorization_code');
    // The example checks the code, its client and (strict) its resource; its own token is not used.
    const granted = await this.demo.exchangeAuthorizationCode(client, code, verifier);
    return this.issue(client.client_id, resource ?? this.expectedResource, granted.scope?.split(' ') ?? []);
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    _scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    this.grants.push('refresh_token');
    const issued = this.refresh.get(refreshToken);
    if (issued === undefined || issued.clientId !== client.client_id)
      throw new InvalidGrantError('unknown refresh token');
    if (resource !== undefined && resource.href !== issued.resource?.href)
      throw new InvalidGrantError('another resource');
    this.refresh.delete(refreshToken);
    return this.issue(client.client_id, issued.resource, issued.scopes);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const issued = this.access.get(token);
    if (issued === undefined || issued.expiresAt <= Date.now())
      throw new InvalidTokenError('invalid or expired token');
    return {
      token,
      clientId: issued.clientId,
      scopes: issued.scopes,
      expiresAt: Math.floor(issued.expiresAt / 1000),
      ...(issued.resource === undefined ? {} : { resource: issued.resource }),
    };
  }

  private issue(clientId: string, resource: URL | undefined, scopes: string[]): OAuthTokens {
    const access = randomUUID();
    const refresh = randomUUID();
    const record = { clientId, resource, scopes, expiresAt: Date.now() + 3_600_000 };
    this.access.set(access, record);
    this.refresh.set(refresh, { ...record });
    return {
      access_token: access,
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: refresh,
      scope: scopes.join(' '),
    };
  }
}

/** A protected MCP server and its authorization server, both on 127.0.0.1. */
export interface OAuthUpstream {
  /** The MCP endpoint: `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** The authorization server's issuer: `http://127.0.0.1:<port>/`. */
  readonly issuer: string;
  /** The protected resource metadata served (RFC 9728): change it to test refusals. */
  readonly resourceMetadata: {
    resource: string;
    authorization_servers: string[];
    scopes_supported: string[];
  };
  /** Grants asked for at the token endpoint, in order. */
  readonly grants: readonly string[];
  /** The bearer tokens the MCP endpoint was sent, in order. */
  readonly bearers: readonly string[];
  /** Tool calls the MCP server answered. */
  readonly calls: readonly string[];
  /** Ends every access token issued so far (the next use is answered 401). */
  expireAccessTokens(): void;
  close(): Promise<void>;
}

function mcpServerFor(tools: readonly Tool[], calls: string[]): Server {
  const server = new Server({ name: 'oauth-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...tools] }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    calls.push(request.params.name);
    const args = request.params.arguments ?? {};
    const text = request.params.name === 'add' ? String(Number(args.a) + Number(args.b)) : String(args.text);
    return { content: [{ type: 'text', text }] };
  });
  return server;
}

/**
 * Starts the SDK example's OAuth setup in-process (simpleStreamableHttp --oauth-strict): an
 * authorization server (mcpAuthRouter over the demo provider, dynamic registration, PKCE) and an
 * MCP server behind requireBearerAuth with a strict audience (a token issued for another resource
 * is refused), which serves RFC 9728 metadata naming that authorization server. Stateless JSON.
 */
export async function startOAuthUpstream(tools: readonly Tool[]): Promise<OAuthUpstream> {
  const asApp = express();
  const mcpApp = express();
  const as: LoopbackServer = await listenOnLoopback(asApp);
  const mcp: LoopbackServer = await listenOnLoopback(mcpApp);
  const url = `http://127.0.0.1:${mcp.port}/mcp`;
  const issuerUrl = new URL(`http://127.0.0.1:${as.port}/`);
  const provider = new RefreshingDemoProvider(resourceUrlFromServerUrl(url));
  asApp.use(mcpAuthRouter({ provider, issuerUrl, scopesSupported: ['mcp:tools'] }));
  const resourceMetadata = {
    resource: url,
    authorization_servers: [issuerUrl.href],
    scopes_supported: ['mcp:tools'],
  };
  const metadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(url));
  mcpApp.get(new URL(metadataUrl).pathname, (_req, res) => res.json(resourceMetadata));
  const bearers: string[] = [];
  const calls: string[] = [];
  mcpApp.use(express.json());
  mcpApp.use('/mcp', (req, _res, next) => {
    const header = req.headers.authorization;
    if (header !== undefined) bearers.push(header.replace(/^Bearer /i, ''));
    next();
  });
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: metadataUrl,
    expectedResource: new URL(url),
  });
  mcpApp.post('/mcp', bearer, async (req, res) => {
    const server = mcpServerFor(tools, calls);
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  mcpApp.all('/mcp', bearer, (_req, res) => res.status(405).end());
  return {
    url,
    issuer: issuerUrl.href,
    resourceMetadata,
    grants: provider.grants,
    bearers,
    calls,
    expireAccessTokens: () => {
      for (const issued of provider.access.values()) issued.expiresAt = 0;
    },
    close: async () => {
      await Promise.all([as.close(), mcp.close()]);
    },
  };
}
