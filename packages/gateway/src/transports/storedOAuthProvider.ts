import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { ClientAuthConfig } from '../config/authSchema.js';
import { CLIENT_INFO } from '../defaults.js';
import type { OAuthTokenStore, StoredTokens } from './oauthTokenStore.js';

/**
 * Why an access token cannot be sent as `Authorization: Bearer <token>`, or undefined when it can:
 * a token_type other than Bearer (RFC 6749 §7.1: a client does not use a token of a type it does not
 * know), or characters outside visible ASCII (a CR/LF would inject a header). Never quotes the token.
 */
export function unusableToken(tokens: Pick<OAuthTokens, 'access_token' | 'token_type'>): string | undefined {
  if (tokens.token_type.toLowerCase() !== 'bearer') return `its token_type is not Bearer`;
  if (!/^[\x21-\x7e]+$/.test(tokens.access_token))
    return 'its access token has characters an HTTP header cannot carry';
  return undefined;
}

/** What a {@link StoredOAuthProvider} serves: one upstream, at one authorization server. */
export interface StoredOAuthProviderOptions {
  readonly store: OAuthTokenStore;
  /** The authorization server's issuer: the store's key. */
  readonly issuer: string;
  /** The upstream URL: the key of its tokens under the issuer. */
  readonly resourceKey: string;
  readonly auth: ClientAuthConfig;
  /** Read from `auth.clientSecretEnv` by the caller (never stored, never logged). */
  readonly clientSecret?: string;
  /** The loopback redirect URL (login: the listener's; afterwards: the one registered at login). */
  readonly redirectUrl: string;
  /** The validated discovery: the SDK's auth() uses it instead of discovering again. */
  readonly discovery: OAuthDiscoveryState;
  /**
   * `login`: tokens stored before are not offered (the browser step runs), the authorization URL
   * goes to `onAuthorizationUrl`. `refresh`: no authorization is started (`needsLogin` is set instead).
   */
  readonly purpose: 'login' | 'refresh';
  readonly onAuthorizationUrl?: (url: URL) => void;
}

/**
 * The SDK's OAuthClientProvider for toolpin's client mode, backed by the token store: the client
 * registered per issuer, tokens per upstream, PKCE verifier and state in memory. Client
 * information and tokens are stored as the SDK hands them over (its issuer stamp kept).
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  /** Set when the SDK would start an authorization (refresh purpose): a login is needed. */
  needsLogin = false;
  readonly expectedState = randomBytes(16).toString('base64url');
  /** `auth.clientMetadataUrl`: the client_id when the authorization server supports client ID metadata documents. */
  readonly clientMetadataUrl?: string;
  private verifier: string | undefined;

  constructor(private readonly options: StoredOAuthProviderOptions) {
    if (options.auth.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.auth.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { auth } = this.options;
    return {
      client_name: CLIENT_INFO.name,
      redirect_uris: [this.options.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.options.clientSecret === undefined ? 'none' : 'client_secret_basic',
      ...(auth.scopes === undefined ? {} : { scope: auth.scopes.join(' ') }),
    };
  }

  state(): string {
    return this.expectedState;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const { auth, clientSecret } = this.options;
    if (auth.clientId !== undefined)
      return {
        client_id: auth.clientId,
        ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
      };
    const client = (await this.options.store.issuer(this.options.issuer))?.client;
    // A refresh never registers a client behind the user's back: without one, log in again.
    if (client === undefined && this.options.purpose === 'refresh')
      throw new Error('no client registered at this authorization server: log in again');
    // A client registered for another loopback port cannot receive this login's redirect.
    if (client !== undefined && 'redirect_uris' in client && Array.isArray(client.redirect_uris))
      if (!client.redirect_uris.map(String).includes(this.options.redirectUrl)) return undefined;
    return client;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    // A configured client id is the user's, not a registration: nothing to keep.
    if (this.options.auth.clientId !== undefined) return;
    await this.options.store.update(this.options.issuer, (record) => ({ ...record, client }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    if (this.options.purpose === 'login') return undefined;
    return (await this.stored())?.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    // A token that could not be sent is not kept (the login or the refresh fails instead).
    const unusable = unusableToken(tokens);
    if (unusable !== undefined) throw new Error(`the authorization server's answer is refused: ${unusable}`);
    const { resourceKey, redirectUrl, discovery } = this.options;
    const entry: StoredTokens = {
      tokens,
      ...(tokens.expires_in === undefined ? {} : { expiresAt: Date.now() + tokens.expires_in * 1000 }),
      redirectUrl,
      ...(discovery.resourceMetadataUrl === undefined
        ? {}
        : { resourceMetadataUrl: discovery.resourceMetadataUrl }),
    };
    await this.options.store.update(this.options.issuer, (record) => ({
      ...record,
      ...(discovery.authorizationServerMetadata === undefined
        ? {}
        : { metadata: discovery.authorizationServerMetadata }),
      resources: { ...record.resources, [resourceKey]: entry },
    }));
  }

  redirectToAuthorization(url: URL): void {
    if (this.options.purpose === 'refresh') {
      this.needsLogin = true;
      return;
    }
    this.options.onAuthorizationUrl?.(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no PKCE verifier: the authorization was not started');
    return this.verifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier' || scope === 'discovery') return;
    const { issuer, resourceKey } = this.options;
    await this.options.store.update(issuer, (record) => {
      const resources = { ...record.resources };
      delete resources[resourceKey];
      if (scope === 'tokens') return { ...record, resources };
      const { client: _client, ...rest } = record;
      return { ...rest, resources };
    });
  }

  discoveryState(): OAuthDiscoveryState {
    return this.options.discovery;
  }

  saveDiscoveryState(): void {
    // The discovery is validated by toolpin each time (upstream.url, the pinned issuer): not cached from the SDK.
  }

  private async stored(): Promise<StoredTokens | undefined> {
    return (await this.options.store.issuer(this.options.issuer))?.resources[this.options.resourceKey];
  }
}
