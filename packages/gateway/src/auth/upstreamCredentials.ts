import { LRUCache } from 'lru-cache';
import type { ResourceServerAuthConfig, UpstreamCredentialConfig } from '../config/index.js';
import { AUTH_TOKEN_CACHE_MAX, AUTH_TOKEN_RENEW_SECONDS } from '../defaults.js';
import { GatewayError } from '../errors.js';
import { authFetch, authJson } from './authFetch.js';
import type { IssuerMetadata } from './issuerMetadata.js';
import { basicAuth, type Principal } from './tokenVerifier.js';

/** What the gateway sends upstream in place of the client's credential. */
export interface UpstreamCredential {
  /** Only `forward`: the client's Authorization goes upstream as it came. */
  readonly forwardsClientToken: boolean;
  /** Headers set on every request to the upstream (replacing the client's of the same name). */
  readonly headers: Readonly<Record<string, string>>;
}

interface CachedToken {
  readonly token: string;
  /** In ms since the epoch. */
  readonly renewAt: number;
}

/** What a token request needs of an exchange or client-credentials block. */
interface TokenClient {
  readonly tokenEndpoint?: string | undefined;
  readonly clientId: string;
  readonly clientSecretEnv?: string | undefined;
  readonly scope?: string | undefined;
}

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * The credential of one resource-server route toward its upstream: an RFC 8693 exchange of the
 * client's token (cached per issuer, subject, audience and the token's scopes until shortly before
 * expiry), the
 * client's token as is (`forward`), headers from the environment (`static`) or a client-credentials
 * token (one, cached). Throws GatewayError GW_UPSTREAM_CREDENTIAL when it cannot be had.
 */
export class UpstreamCredentials {
  readonly #server: string;
  readonly #config: UpstreamCredentialConfig;
  readonly #upstreamUrl: string | undefined;
  readonly #metadata: () => Promise<IssuerMetadata>;
  readonly #cache = new LRUCache<string, CachedToken>({ max: AUTH_TOKEN_CACHE_MAX });
  readonly #pending = new Map<string, Promise<string>>();

  constructor(
    server: string,
    auth: ResourceServerAuthConfig,
    upstreamUrl: string | undefined,
    metadata: () => Promise<IssuerMetadata>,
  ) {
    this.#server = server;
    this.#config = auth.upstreamCredential;
    this.#upstreamUrl = upstreamUrl;
    this.#metadata = metadata;
  }

  /** The credential for one request of `principal`, whose own token is `token`. */
  async credentialFor(principal: Principal, token: string): Promise<UpstreamCredential> {
    const config = this.#config;
    switch (config.kind) {
      case 'forward':
        return { forwardsClientToken: true, headers: {} };
      case 'static':
        return { forwardsClientToken: false, headers: this.#staticHeaders(config.headersFromEnv) };
      case 'exchange': {
        const audience = config.audience ?? this.#upstreamUrl;
        // A stdio upstream has no HTTP request to carry a token.
        if (audience === undefined) return { forwardsClientToken: false, headers: {} };
        // The exchanged token takes the subject token's scopes: a narrower token of one subject
        // (another client of hers) never reuses the token exchanged for a broader one.
        const scopes = [...new Set(principal.scopes)].sort().join(' ');
        const key = `exchange\n${principal.issuer}\n${principal.subject}\n${audience}\n${scopes}`;
        const exchanged = await this.#cached(key, () => this.#exchange(config, token, audience));
        return { forwardsClientToken: false, headers: { authorization: `Bearer ${exchanged}` } };
      }
      case 'client-credentials': {
        const granted = await this.#cached('client-credentials', () => this.#clientCredentials(config));
        return { forwardsClientToken: false, headers: { authorization: `Bearer ${granted}` } };
      }
    }
  }

  #failure(reason: string, message: string): GatewayError {
    return new GatewayError('GW_UPSTREAM_CREDENTIAL', message, { server: this.#server, reason });
  }

  #staticHeaders(fromEnv: Readonly<Record<string, string>>): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, variable] of Object.entries(fromEnv)) {
      const value = process.env[variable];
      if (value === undefined) throw this.#failure('env_unset', `${variable} is not set`);
      headers[name.toLowerCase()] = value;
    }
    return headers;
  }

  async #cached(key: string, fetchToken: () => Promise<{ token: string; expiresIn: number | undefined }>) {
    const hit = this.#cache.get(key);
    if (hit !== undefined && hit.renewAt > Date.now()) return hit.token;
    let pending = this.#pending.get(key);
    if (pending === undefined) {
      pending = fetchToken()
        .then(({ token, expiresIn }) => {
          // Without expires_in a token is used for this request alone.
          if (expiresIn !== undefined)
            this.#cache.set(key, {
              token,
              renewAt: Date.now() + (expiresIn - AUTH_TOKEN_RENEW_SECONDS) * 1000,
            });
          return token;
        })
        .finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
    }
    return pending;
  }

  #secret(variable: string | undefined): string | undefined {
    if (variable === undefined) return undefined;
    const secret = process.env[variable];
    if (secret === undefined) throw this.#failure('env_unset', `${variable} is not set`);
    return secret;
  }

  async #exchange(
    config: Extract<UpstreamCredentialConfig, { kind: 'exchange' }>,
    token: string,
    audience: string,
  ): Promise<{ token: string; expiresIn: number | undefined }> {
    return this.#tokenRequest(config, {
      grant_type: TOKEN_EXCHANGE,
      subject_token: token,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
      audience,
      resource: audience,
    });
  }

  async #clientCredentials(
    config: Extract<UpstreamCredentialConfig, { kind: 'client-credentials' }>,
  ): Promise<{ token: string; expiresIn: number | undefined }> {
    const resource = config.resource ?? this.#upstreamUrl;
    return this.#tokenRequest(config, {
      grant_type: 'client_credentials',
      ...(resource === undefined ? {} : { resource }),
    });
  }

  /** One token request (RFC 6749 §3.2): a confidential client authenticates with Basic, a public one names itself. */
  async #tokenRequest(
    client: TokenClient,
    form: Record<string, string>,
  ): Promise<{ token: string; expiresIn: number | undefined }> {
    const { clientId } = client;
    const secret = this.#secret(client.clientSecretEnv);
    if (client.scope !== undefined) form.scope = client.scope;
    const configured = client.tokenEndpoint;
    const endpoint = configured ?? (await this.#metadata()).tokenEndpoint;
    if (endpoint === undefined)
      throw this.#failure('no_token_endpoint', 'the issuer publishes no token_endpoint');
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (secret === undefined) form.client_id = clientId;
    else headers.authorization = basicAuth(clientId, secret);
    let answer: Record<string, unknown>;
    let status: number;
    try {
      const response = await authFetch(endpoint, {
        method: 'POST',
        headers,
        body: new URLSearchParams(form).toString(),
      });
      status = response.status;
      answer = await authJson(endpoint, response);
    } catch (error) {
      throw this.#failure('token_endpoint', `the token endpoint failed: ${(error as Error).message}`);
    }
    if (status !== 200 || typeof answer.access_token !== 'string' || answer.access_token === '') {
      // The provider's error code (RFC 6749 §5.2) names the problem; its description is not repeated.
      const code = typeof answer.error === 'string' ? answer.error.slice(0, 64) : `HTTP ${status}`;
      throw this.#failure('refused', `the token endpoint refused (${code})`);
    }
    const expiresIn =
      typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : undefined;
    return { token: answer.access_token, expiresIn };
  }
}
