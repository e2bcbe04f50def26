import type { ResourceServerAuthConfig } from '../config/index.js';

/** The RFC 9728 path prefix of protected resource metadata. */
export const PROTECTED_RESOURCE_PREFIX = '/.well-known/oauth-protected-resource';

/** Where a resource's metadata is served (RFC 9728 §3.1): the prefix, then the resource's path. */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  return `${url.origin}${PROTECTED_RESOURCE_PREFIX}${url.pathname === '/' ? '' : url.pathname}`;
}

/** A route's protected resource metadata (RFC 9728 §2): its configured URL, never one derived from Host. */
export function protectedResourceMetadata(config: ResourceServerAuthConfig): Record<string, unknown> {
  return {
    resource: config.resource,
    authorization_servers: [config.issuer],
    ...(config.scopes.length > 0 ? { scopes_supported: config.scopes } : {}),
    bearer_methods_supported: ['header'],
  };
}

/** A quoted-string of RFC 9110 §5.6.4 (the texts quoted here are the gateway's own). */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&').replace(/[^\x20-\x7e]/g, '')}"`;
}

/**
 * The route's Bearer challenge (RFC 6750 §3, RFC 9728 §5.1): its own `resource_metadata`, the
 * scopes it asks for (`scopes`, default the route's; on insufficient_scope, those a new token
 * needs: step-up), and the error.
 */
export function bearerChallenge(
  config: ResourceServerAuthConfig,
  refusal?: { readonly error: string; readonly description: string },
  scopes: readonly string[] = config.scopes,
): string {
  const params = [`resource_metadata=${quoted(resourceMetadataUrl(config.resource))}`];
  if (scopes.length > 0) params.push(`scope=${quoted(scopes.join(' '))}`);
  if (refusal !== undefined)
    params.push(`error=${quoted(refusal.error)}`, `error_description=${quoted(refusal.description)}`);
  return `Bearer ${params.join(', ')}`;
}
