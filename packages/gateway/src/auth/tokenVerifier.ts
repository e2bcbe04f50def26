import type { JWTPayload, createRemoteJWKSet } from 'jose';
import type { ResourceServerAuthConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import { authFetch, authJson } from './authFetch.js';
import type { IssuerMetadata } from './issuerMetadata.js';

/** Who a verified token speaks for: sessions and observations are keyed by issuer and subject. */
export interface Principal {
  readonly issuer: string;
  readonly subject: string;
  readonly scopes: readonly string[];
  /** The client the token was issued to: its `azp` claim, else `client_id` (RFC 9068 §2.2); undefined when it names none. */
  readonly clientId: string | undefined;
  /** Expiry, in seconds since the epoch, when the token says. */
  readonly expiresAt: number | undefined;
}

/** A client's token refused: the `error` of the Bearer challenge (RFC 6750 §3.1). */
export class TokenRefusal extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_token' | 'insufficient_scope',
    message: string,
  ) {
    super(message);
    this.name = 'TokenRefusal';
  }
}

/** The scopes a token carries: `scope` (RFC 8693 §4.2, RFC 9068) or `scp` (a list or a string). */
function scopesOf(claims: Record<string, unknown>): string[] {
  const value = claims.scope ?? claims.scp;
  if (typeof value === 'string') return value.split(' ').filter((scope) => scope !== '');
  return Array.isArray(value) ? value.filter((scope): scope is string => typeof scope === 'string') : [];
}

/** The client a token was issued to: `azp` (OpenID Connect), else `client_id` (RFC 9068, RFC 7662). */
function clientIdOf(claims: Record<string, unknown>): string | undefined {
  const value = claims.azp ?? claims.client_id;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** True when `aud` (a string or a list) holds `resource`. */
function audienceHolds(aud: unknown, resource: string): boolean {
  return aud === resource || (Array.isArray(aud) && aud.includes(resource));
}

type Jose = typeof import('jose');
/** jose, loaded by the first token to verify (a gateway without resource-server routes never needs it). */
let jose: Promise<Jose> | undefined;
function loadJose(): Promise<Jose> {
  jose ??= import('jose');
  return jose;
}

/** Why jose refused a token, in words that never repeat the token or a claim's value. */
function refusalOf(error: unknown, errors: Jose['errors']): TokenRefusal | undefined {
  if (error instanceof errors.JWTExpired) return new TokenRefusal('invalid_token', 'the token has expired');
  if (error instanceof errors.JWTClaimValidationFailed)
    return new TokenRefusal('invalid_token', `the token's "${error.claim}" claim is not accepted here`);
  if (error instanceof errors.JOSEAlgNotAllowed)
    return new TokenRefusal('invalid_token', "the token's signing algorithm is not accepted here");
  // The key set could not be had (no answer, not 200, not a JWKS): the provider's failure, not the token's.
  if (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    error instanceof GatewayError ||
    (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC')
  )
    return undefined;
  if (error instanceof errors.JOSEError)
    return new TokenRefusal('invalid_token', 'the token is not a valid JWT signed by the identity provider');
  return undefined;
}

/**
 * Verifies the bearer tokens of one resource-server route: a JWT against the issuer's JWKS (jose),
 * or an opaque token by RFC 7662 introspection; then issuer, audience (the route's `resource`),
 * expiry and not-before (with the configured skew), algorithms and the required scopes.
 */
export class TokenVerifier {
  readonly #config: ResourceServerAuthConfig;
  readonly #metadata: () => Promise<IssuerMetadata>;
  #jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  constructor(config: ResourceServerAuthConfig, metadata: () => Promise<IssuerMetadata>) {
    this.#config = config;
    this.#metadata = metadata;
  }

  /** The token's principal; throws TokenRefusal (the client's fault) or GatewayError (the provider's). */
  async verify(token: string): Promise<Principal> {
    const principal =
      this.#config.introspection === undefined ? await this.#verifyJwt(token) : await this.#introspect(token);
    const missing = this.#config.scopes.filter((scope) => !principal.scopes.includes(scope));
    if (missing.length > 0)
      throw new TokenRefusal('insufficient_scope', `the token lacks the scope ${missing.join(' ')}`);
    return principal;
  }

  async #verifyJwt(token: string): Promise<Principal> {
    const config = this.#config;
    let payload: JWTPayload;
    const { errors, jwtVerify } = await loadJose();
    try {
      ({ payload } = await jwtVerify(token, await this.#keySet(), {
        issuer: config.issuer,
        audience: config.resource,
        algorithms: config.algorithms,
        clockTolerance: config.clockSkewSeconds,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      throw refusalOf(error, errors) ?? error;
    }
    // jose checks that `sub` is there, not what it is: sessions are keyed by it (as introspection's).
    if (typeof payload.sub !== 'string' || payload.sub === '')
      throw new TokenRefusal('invalid_token', 'the token names no subject');
    return {
      issuer: config.issuer,
      subject: payload.sub,
      scopes: scopesOf(payload),
      clientId: clientIdOf(payload),
      expiresAt: payload.exp,
    };
  }

  #keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    this.#jwks ??= (async () => {
      const uri = this.#config.jwksUri ?? (await this.#metadata()).jwksUri;
      if (uri === undefined)
        throw new GatewayError('GW_AUTH_PROVIDER_UNAVAILABLE', 'the issuer publishes no jwks_uri', {
          url: new URL(this.#config.issuer).origin,
          reason: 'no_jwks_uri',
        });
      const { createRemoteJWKSet, customFetch } = await loadJose();
      return createRemoteJWKSet(new URL(uri), {
        [customFetch]: (url: string, options: { headers: Headers; method: string }) =>
          authFetch(url, { headers: options.headers, method: options.method }),
      });
    })().catch((error: unknown) => {
      this.#jwks = undefined;
      throw error;
    });
    return this.#jwks;
  }

  /** RFC 7662: the provider says whether the token is active and what it is for; checked as a JWT's claims. */
  async #introspect(token: string): Promise<Principal> {
    const config = this.#config;
    const { endpoint, clientId, clientSecretEnv } = config.introspection!;
    const secret = process.env[clientSecretEnv];
    if (secret === undefined)
      throw new GatewayError('GW_AUTH_PROVIDER_UNAVAILABLE', `${clientSecretEnv} is not set`, {
        url: new URL(endpoint).origin,
        reason: 'no_client_secret',
      });
    const response = await authFetch(endpoint, {
      method: 'POST',
      headers: {
        authorization: basicAuth(clientId, secret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    });
    if (response.status !== 200)
      throw new GatewayError(
        'GW_AUTH_PROVIDER_UNAVAILABLE',
        `introspection answered HTTP ${response.status}`,
        {
          url: new URL(endpoint).origin,
          reason: 'status',
        },
      );
    return principalOfIntrospection(await authJson(endpoint, response), config);
  }
}

/**
 * An active introspection answer for this route (RFC 7662 §2.2), else a refusal. RFC 7662 makes
 * every member but `active` optional; the route requires what it requires of a JWT: `iss` (the
 * configured issuer), `aud` (the route), `exp` and `sub`.
 */
function principalOfIntrospection(
  answer: Record<string, unknown>,
  config: ResourceServerAuthConfig,
): Principal {
  const now = Math.floor(Date.now() / 1000);
  const skew = config.clockSkewSeconds;
  const refuse = (message: string): never => {
    throw new TokenRefusal('invalid_token', message);
  };
  if (answer.active !== true) refuse('the token is not active');
  // As for a JWT: the issuer and the expiry are required, not checked only when the answer has them.
  if (answer.iss === undefined) refuse('the token names no issuer ("iss")');
  if (answer.iss !== config.issuer) refuse('the token\'s "iss" is not accepted here');
  if (!audienceHolds(answer.aud, config.resource)) refuse('the token\'s "aud" is not accepted here');
  if (typeof answer.exp !== 'number' || !Number.isFinite(answer.exp))
    refuse('the token has no expiry ("exp")');
  const exp = answer.exp as number;
  if (exp + skew <= now) refuse('the token has expired');
  if (typeof answer.nbf === 'number' && answer.nbf - skew > now) refuse('the token is not valid yet');
  if (typeof answer.sub !== 'string' || answer.sub === '') refuse('the token names no subject');
  return {
    issuer: config.issuer,
    subject: answer.sub as string,
    scopes: scopesOf(answer),
    clientId: clientIdOf(answer),
    expiresAt: exp,
  };
}

/** HTTP Basic client authentication (RFC 6749 §2.3.1: id and secret form-encoded first). */
export function basicAuth(clientId: string, secret: string): string {
  const encode = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}
