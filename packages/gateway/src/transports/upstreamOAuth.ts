import {
  auth,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import {
  checkResourceAllowed,
  resourceUrlFromServerUrl,
} from '@modelcontextprotocol/sdk/shared/auth-utils.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientAuthConfig } from '../config/authSchema.js';
import { isStdioUpstream, type ServerConfig } from '../config/index.js';
import { AUTH_FETCH_TIMEOUT_MS, CLIENT_INFO, OAUTH_EXPIRY_MARGIN_MS } from '../defaults.js';
import { GatewayError } from '../errors.js';
import { oauthFetch } from './oauthFetch.js';
import { OAuthTokenStore, type StoredTokens } from './oauthTokenStore.js';
import { StoredOAuthProvider, unusableToken } from './storedOAuthProvider.js';

/** Why the client mode cannot authorize a request: the `reason` of its GW_UPSTREAM_AUTH and -32041. */
export type UpstreamAuthReason =
  'login_required' | 'issuer_drift' | 'metadata_invalid' | 'insufficient_scope';

/** Options of {@link UpstreamOAuth}. */
export interface UpstreamOAuthOptions {
  /** The server's name (messages, errors). */
  readonly server: string;
  /** The pin file: `toolpin login <file>` is what the user is told to run. */
  readonly pinFile: string;
  /** The upstream URL (the pin's `upstream.url`): the protected resource. */
  readonly url: string;
  readonly auth: ClientAuthConfig;
  /** @default the user's store, `~/.toolpin/oauth-tokens.json` */
  readonly store?: OAuthTokenStore;
  /** The fetch of the OAuth requests. @default oauthFetch() (HTTPS except loopback, bounded) */
  readonly fetch?: FetchLike;
  /** Where `clientSecretEnv` is read. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The upstream's validated metadata: the authorization server to use and what the SDK needs of it. */
export interface UpstreamDiscovery extends OAuthDiscoveryState {
  /** The authorization server's issuer (its metadata's `issuer`, checked against the URL it came from). */
  readonly issuer: string;
  /** The scope the upstream's challenge asked for. */
  readonly scope?: string;
}

/** An OAuth error's code (`invalid_grant`), or the error's class: what of a failed refresh is told. */
function oauthErrorName(error: unknown): string {
  if (error instanceof OAuthError) return error.errorCode;
  return error instanceof Error ? error.name : 'error';
}

/** Two issuer identifiers compared as parsed URLs, one trailing `/` aside. */
export function sameIssuer(a: string, b: string): boolean {
  const norm = (value: string): string => {
    const href = URL.canParse(value) ? new URL(value).href : value;
    return href.endsWith('/') ? href.slice(0, -1) : href;
  };
  return norm(a) === norm(b);
}

/**
 * toolpin as an upstream's OAuth client (pin file `auth.mode: client`): the upstream's protected
 * resource metadata checked against `upstream.url` before any of its authorization servers is
 * trusted, the authorization server compared with the pinned `auth.issuer` (another one is drift,
 * refused), the bearer read from the token store and refreshed, through the SDK's `auth()`, when it
 * expires or the upstream answers 401. Fails closed: GW_UPSTREAM_AUTH naming the server and the
 * `toolpin login` to run. Tokens are never logged nor put in an error.
 */
export class UpstreamOAuth {
  readonly store: OAuthTokenStore;
  readonly fetch: FetchLike;
  private discovered: Promise<UpstreamDiscovery> | undefined;
  private refreshing: Promise<string> | undefined;

  constructor(readonly options: UpstreamOAuthOptions) {
    this.store = options.store ?? new OAuthTokenStore();
    this.fetch = options.fetch ?? oauthFetch();
  }

  /** The error every refusal of this upstream's authorization is. */
  refusal(reason: UpstreamAuthReason, detail: string, cause?: unknown): GatewayError {
    const { server, pinFile } = this.options;
    const hint =
      reason === 'login_required'
        ? `; run: toolpin login ${pinFile}`
        : reason === 'insufficient_scope'
          ? `; add it to auth.scopes in ${pinFile} and run: toolpin login ${pinFile}`
          : reason === 'issuer_drift'
            ? `; if the change is expected, review it, set auth.issuer in ${pinFile} and run: toolpin login ${pinFile}`
            : '';
    return new GatewayError(
      'GW_UPSTREAM_AUTH',
      `server ${server}: ${detail}${hint}`,
      { server, reason, file: pinFile },
      cause === undefined ? undefined : { cause },
    );
  }

  /** The client secret named by `auth.clientSecretEnv`, when set. */
  clientSecret(): string | undefined {
    const name = this.options.auth.clientSecretEnv;
    return name === undefined ? undefined : (this.options.env ?? process.env)[name];
  }

  /**
   * Asks the upstream without credentials what it wants (the WWW-Authenticate of its 401 to an
   * initialize): where its protected resource metadata is, and the scope it asks for.
   */
  async challenge(): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
    let response: Response;
    try {
      response = await fetch(this.options.url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(AUTH_FETCH_TIMEOUT_MS),
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: CLIENT_INFO,
          },
        }),
      });
    } catch (error) {
      throw this.refusal('metadata_invalid', `cannot reach ${this.options.url}`, error);
    }
    await response.body?.cancel().catch(() => undefined);
    if (response.status !== 401) return {};
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
    return {
      ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }),
      ...(scope === undefined ? {} : { scope }),
    };
  }

  /**
   * Reads and validates the upstream's metadata (once per instance when it succeeds): RFC 9728
   * protected resource metadata (at `resourceMetadataUrl`, which must be on the upstream's origin,
   * else the well-known paths), whose `resource` must be the upstream URL or a prefix of it on its
   * origin; then its authorization server, which must be the pinned `auth.issuer` when one is pinned,
   * and whose RFC 8414 / OIDC metadata must name itself as `issuer`. Without protected resource
   * metadata the upstream's origin is its authorization server, with or without
   * metadata of its own (MCP 2025-03-26: then the default endpoints).
   */
  discover(hint: { resourceMetadataUrl?: URL; scope?: string } = {}): Promise<UpstreamDiscovery> {
    this.discovered ??= this.discoverOnce(hint).catch((error: unknown) => {
      this.discovered = undefined;
      throw error;
    });
    return this.discovered;
  }

  private async discoverOnce(hint: {
    resourceMetadataUrl?: URL;
    scope?: string;
  }): Promise<UpstreamDiscovery> {
    const upstream = new URL(this.options.url);
    const metadataUrl = hint.resourceMetadataUrl ?? (await this.storedMetadataUrl());
    if (metadataUrl !== undefined && metadataUrl.origin !== upstream.origin)
      throw this.refusal(
        'metadata_invalid',
        `its protected resource metadata is announced on another origin (${metadataUrl.origin}), not read`,
      );
    const resource = await this.resourceMetadata(metadataUrl);
    if (resource !== undefined) {
      const expected = resourceUrlFromServerUrl(upstream);
      if (!checkResourceAllowed({ requestedResource: expected, configuredResource: resource.resource }))
        throw this.refusal(
          'metadata_invalid',
          `its protected resource metadata names the resource ${resource.resource}, not ${expected.href}: its authorization servers are not trusted`,
        );
    }
    const servers = resource?.authorization_servers ?? [];
    const pinned = this.options.auth.issuer;
    const chosen =
      pinned === undefined
        ? (servers[0] ?? upstream.origin)
        : (servers.find((candidate) => sameIssuer(candidate, pinned)) ?? servers[0] ?? upstream.origin);
    if (pinned !== undefined && !sameIssuer(chosen, pinned))
      throw this.refusal(
        'issuer_drift',
        `the upstream now sends its users to the authorization server ${chosen}, the pin records ${pinned} (drift: refused)`,
      );
    const metadata = await this.serverMetadata(chosen, resource === undefined);
    return {
      issuer: metadata === undefined || resource === undefined ? chosen : metadata.issuer,
      authorizationServerUrl: chosen,
      ...(metadata === undefined ? {} : { authorizationServerMetadata: metadata }),
      ...(resource === undefined ? {} : { resourceMetadata: resource }),
      ...(metadataUrl === undefined ? {} : { resourceMetadataUrl: metadataUrl.href }),
      ...(hint.scope === undefined ? {} : { scope: hint.scope }),
    };
  }

  /**
   * The authorization server's RFC 8414 / OIDC metadata, which must name `url` as its issuer. None
   * at all is allowed only for an upstream without protected resource metadata (`legacy`): then
   * the upstream's origin is its authorization server, with the default endpoints (MCP 2025-03-26).
   */
  private async serverMetadata(
    url: string,
    legacy: boolean,
  ): Promise<AuthorizationServerMetadata | undefined> {
    const metadata = await discoverAuthorizationServerMetadata(url, { fetchFn: this.fetch }).catch(
      (error: unknown) => {
        throw this.refusal('metadata_invalid', `cannot read the metadata of ${url}`, error);
      },
    );
    // Without protected resource metadata, the metadata is the upstream's own (its origin's), and
    // MCP 2025-03-26 asks no issuer of it: it is keyed by the URL it came from, as the SDK keys it.
    if (legacy) return metadata;
    if (metadata === undefined || !sameIssuer(metadata.issuer, url))
      throw this.refusal(
        'metadata_invalid',
        metadata === undefined
          ? `the authorization server ${url} publishes no metadata`
          : `the metadata of ${url} names another issuer (${metadata.issuer})`,
      );
    return metadata;
  }

  private async resourceMetadata(metadataUrl: URL | undefined) {
    try {
      return await discoverOAuthProtectedResourceMetadata(
        this.options.url,
        metadataUrl === undefined ? {} : { resourceMetadataUrl: metadataUrl },
        this.fetch,
      );
    } catch (error) {
      // Only its absence (404 on every well-known path) falls back to the upstream's origin.
      if (
        error instanceof Error &&
        /does not implement OAuth 2.0 Protected Resource Metadata/.test(error.message)
      )
        return undefined;
      throw this.refusal('metadata_invalid', 'cannot read its protected resource metadata', error);
    }
  }

  // The store is keyed by issuer: the metadata URL of a login is found under any issuer for this upstream.
  private async storedMetadataUrl(): Promise<URL | undefined> {
    const issuer = this.options.auth.issuer;
    if (issuer === undefined) return undefined;
    const stored = (await this.store.issuer(issuer))?.resources[this.options.url];
    return stored?.resourceMetadataUrl === undefined ? undefined : new URL(stored.resourceMetadataUrl);
  }

  /** A provider of the SDK over the store, for `discovery`. */
  provider(
    discovery: UpstreamDiscovery,
    redirectUrl: string,
    purpose: 'login' | 'refresh',
    onAuthorizationUrl?: (url: URL) => void,
  ): StoredOAuthProvider {
    const secret = this.clientSecret();
    return new StoredOAuthProvider({
      store: this.store,
      issuer: discovery.issuer,
      resourceKey: this.options.url,
      auth: this.options.auth,
      ...(secret === undefined ? {} : { clientSecret: secret }),
      redirectUrl,
      discovery,
      purpose,
      ...(onAuthorizationUrl === undefined ? {} : { onAuthorizationUrl }),
    });
  }

  /** The scope asked for: the pin's `auth.scopes`, else the upstream's challenge (else the SDK's choice). */
  scope(discovery: UpstreamDiscovery): string | undefined {
    return this.options.auth.scopes?.join(' ') ?? discovery.scope;
  }

  private async stored(discovery: UpstreamDiscovery): Promise<StoredTokens | undefined> {
    return (await this.store.issuer(discovery.issuer))?.resources[this.options.url];
  }

  /**
   * The access token to send: the stored one, refreshed first when it expires within a margin.
   * Rejects with GW_UPSTREAM_AUTH (no token, refresh refused, metadata refused).
   */
  async accessToken(): Promise<string> {
    const discovery = await this.discover();
    const stored = await this.stored(discovery);
    if (stored === undefined) throw this.refusal('login_required', `no OAuth token for ${discovery.issuer}`);
    const expiring =
      stored.expiresAt !== undefined && stored.expiresAt - OAUTH_EXPIRY_MARGIN_MS <= Date.now();
    return expiring ? this.refresh(stored.tokens.access_token) : this.sendable(stored, discovery);
  }

  /** The stored access token, when it can be sent as a bearer (a store edited by hand may hold one that cannot). */
  private sendable(stored: StoredTokens, discovery: UpstreamDiscovery): string {
    const unusable = unusableToken(stored.tokens);
    if (unusable !== undefined)
      throw this.refusal(
        'login_required',
        `the stored OAuth token for ${discovery.issuer} cannot be sent: ${unusable}`,
      );
    return stored.tokens.access_token;
  }

  /**
   * A fresh access token after `rejected` was refused (401) or expired: the store's newer one when
   * another request already refreshed it, else a refresh through the SDK's auth() (one at a time).
   */
  async refresh(rejected: string): Promise<string> {
    this.refreshing ??= this.refreshOnce(rejected).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refreshOnce(rejected: string): Promise<string> {
    const discovery = await this.discover();
    const stored = await this.stored(discovery);
    if (stored !== undefined && stored.tokens.access_token !== rejected)
      return this.sendable(stored, discovery);
    if (stored?.tokens.refresh_token === undefined)
      throw this.refusal(
        'login_required',
        `the OAuth token for ${discovery.issuer} expired and cannot be refreshed`,
      );
    const provider = this.provider(discovery, stored.redirectUrl, 'refresh');
    const scope = this.scope(discovery);
    let result: string;
    try {
      result = await auth(provider, {
        serverUrl: this.options.url,
        fetchFn: this.fetch,
        ...(scope === undefined ? {} : { scope }),
      });
    } catch (error) {
      // Not the error itself as cause: an authorization server's answer may quote what was sent.
      throw this.refusal(
        'login_required',
        `the refresh of its OAuth token at ${discovery.issuer} failed (${oauthErrorName(error)})`,
      );
    }
    const fresh = await this.stored(discovery);
    if (result !== 'AUTHORIZED' || provider.needsLogin || fresh === undefined)
      throw this.refusal(
        'login_required',
        `the refresh of its OAuth token at ${discovery.issuer} was refused`,
      );
    return this.sendable(fresh, discovery);
  }
}

type OAuthServer = Pick<ServerConfig, 'name' | 'file' | 'upstream' | 'auth'>;

// One client per loaded pin, shared by its sessions: a refresh is done once, not once per session
// (a refresh token rotated by one would be refused to the others). A reload loads a new pin.
const clients = new WeakMap<OAuthServer, UpstreamOAuth>();

/** The OAuth client of a server whose pin says `auth.mode: client` and whose upstream is a URL (one per loaded pin); else undefined. */
export function upstreamOAuthOf(server: OAuthServer): UpstreamOAuth | undefined {
  if (server.auth?.mode !== 'client' || isStdioUpstream(server.upstream)) return undefined;
  let client = clients.get(server);
  if (client === undefined) {
    client = new UpstreamOAuth({
      server: server.name,
      pinFile: server.file,
      url: server.upstream.url,
      auth: server.auth,
    });
    clients.set(server, client);
  }
  return client;
}

/** `{ oauth }` for openUpstream when the server is in client mode, else nothing. */
export function oauthOption(server: OAuthServer): { oauth?: UpstreamOAuth } {
  const oauth = upstreamOAuthOf(server);
  return oauth === undefined ? {} : { oauth };
}
