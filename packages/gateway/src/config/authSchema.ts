import { z } from 'zod';
import { ENV_NAME_PATTERN, httpUrlSchema } from './schemaParts.js';

// How a route's credentials work (docs/oauth.md). Secrets are never written in a pin file: a
// secret is named by the environment variable that holds it (`...Env`).

const ENV_NAME = z.string().regex(ENV_NAME_PATTERN, 'an environment variable name (letters, digits, "_")');

/** transparent (the default): credentials pass as they are; OAuth discovery is answered with a JSON 404. */
export const transparentAuthSchema = z.strictObject({ mode: z.literal('transparent') });

/** How the gateway, as the protected resource, authenticates to the upstream. */
export const upstreamCredentialSchema = z.discriminatedUnion('kind', [
  // RFC 8693 token exchange at the identity provider for the upstream's audience.
  z.strictObject({
    kind: z.literal('exchange'),
    /** The upstream's audience (resource); default: the upstream URL. */
    audience: httpUrlSchema.optional(),
    /** Default: the token endpoint of the identity provider's metadata. */
    tokenEndpoint: httpUrlSchema.optional(),
    clientId: z.string().min(1),
    clientSecretEnv: ENV_NAME.optional(),
    scope: z.string().min(1).optional(),
  }),
  // The client's token as is: only where the upstream's operator made it accept the gateway's audience.
  z.strictObject({ kind: z.literal('forward') }),
  // Headers whose values come from environment variables (an API key, a service token).
  z.strictObject({ kind: z.literal('static'), headersFromEnv: z.record(z.string().min(1), ENV_NAME) }),
  // The OAuth client-credentials grant (a service credential).
  z.strictObject({
    kind: z.literal('client-credentials'),
    tokenEndpoint: httpUrlSchema.optional(),
    clientId: z.string().min(1),
    clientSecretEnv: ENV_NAME,
    scope: z.string().min(1).optional(),
    /** RFC 8707 resource indicator; default: the upstream URL. */
    resource: httpUrlSchema.optional(),
  }),
]);

/** The JWS algorithms a resource-server route may accept (public-key signatures, RFC 7518 / RFC 8037). */
const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

/** resource-server: toolpin is the OAuth protected resource for `/<name>/mcp`. */
export const resourceServerAuthSchema = z.strictObject({
  mode: z.literal('resource-server'),
  /** The route's public URL (`https://gateway.example/<name>/mcp`): the audience and RFC 9728 `resource`. Never derived from Host. */
  resource: httpUrlSchema,
  /** The identity provider (authorization server) issuer; its metadata comes from RFC 8414 / OIDC discovery. */
  issuer: httpUrlSchema,
  /** Default: `jwks_uri` of the issuer's metadata. */
  jwksUri: httpUrlSchema.optional(),
  /** RFC 7662 introspection instead of JWT validation (opaque tokens). */
  introspection: z
    .strictObject({ endpoint: httpUrlSchema, clientId: z.string().min(1), clientSecretEnv: ENV_NAME })
    .optional(),
  /** Scopes a token must carry (also `scopes_supported` and the challenge's `scope`). */
  scopes: z.array(z.string().min(1)).default([]),
  /** Asymmetric signature algorithms only: `none` and the HMAC ones (a key shared with clients) are refused. */
  algorithms: z.array(z.enum(ASYMMETRIC_ALGORITHMS)).min(1).default(['RS256', 'ES256']),
  clockSkewSeconds: z.number().int().min(0).max(300).default(30),
  upstreamCredential: upstreamCredentialSchema,
});

/** client: toolpin is the upstream's OAuth client (wrap, pin, check, approve; `toolpin login`). */
export const clientAuthSchema = z.strictObject({
  mode: z.literal('client'),
  /**
   * The authorization server's issuer, recorded when the server was pinned or logged in to: an
   * upstream whose protected resource metadata names another one is drift (refused).
   */
  issuer: httpUrlSchema.optional(),
  /** A pre-registered client id (else a client ID metadata document or dynamic registration). */
  clientId: z.string().min(1).optional(),
  clientSecretEnv: ENV_NAME.optional(),
  /** A client ID metadata document URL (used as client_id when the server supports it). */
  clientMetadataUrl: httpUrlSchema.optional(),
  scopes: z.array(z.string().min(1)).optional(),
  /** The loopback redirect port for `toolpin login`; default: any free port. */
  redirectPort: z.number().int().min(1).max(65535).optional(),
});

export const authSchema = z.discriminatedUnion('mode', [
  transparentAuthSchema,
  resourceServerAuthSchema,
  clientAuthSchema,
]);

export type AuthConfig = z.output<typeof authSchema>;
export type ResourceServerAuthConfig = z.output<typeof resourceServerAuthSchema>;
export type ClientAuthConfig = z.output<typeof clientAuthSchema>;
export type UpstreamCredentialConfig = z.output<typeof upstreamCredentialSchema>;

/** The route's resource-server block, when it is one (the gateway then owns the route's credentials). */
export function resourceServerAuthOf(auth: AuthConfig | undefined): ResourceServerAuthConfig | undefined {
  return auth?.mode === 'resource-server' ? auth : undefined;
}

/**
 * Why a resource-server route's `resource` cannot be the route of server `name` (its path must be
 * `/<name>/mcp`: the audience clients ask tokens for is the URL they connect to), or undefined.
 */
export function resourcePathProblem(name: string, auth: AuthConfig | undefined): string | undefined {
  if (auth?.mode !== 'resource-server') return undefined;
  const url = new URL(auth.resource);
  if (url.pathname === `/${name}/mcp` && url.search === '' && url.hash === '') return undefined;
  return `the route's public URL, ending in /${name}/mcp (no query, no fragment)`;
}
