import { fetchAuthDocument } from '../auth/authFetch.js';
import { PROTECTED_RESOURCE_PREFIX, resourceMetadataUrl } from '../auth/resourceMetadata.js';
import type { ResourceServerAuthConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import type { GatewayLogger } from '../observe/logger.js';
import { sameIssuer } from '../transports/upstreamOAuth.js';

/** A URL of the upstream's metadata as it is logged: a string, bounded. */
const shown = (value: string): string => (value.length > 200 ? `${value.slice(0, 200)}…` : value);

/**
 * The upstream's own protected resource metadata (RFC 9728 §3.1: at its path, then at its
 * origin's root), through the gateway's bounded identity provider fetch; else why none was read.
 */
async function upstreamResourceMetadata(upstreamUrl: string): Promise<Record<string, unknown> | string> {
  const root = `${new URL(upstreamUrl).origin}${PROTECTED_RESOURCE_PREFIX}`;
  let reason = 'unreadable';
  for (const url of new Set([resourceMetadataUrl(upstreamUrl), root])) {
    try {
      return await fetchAuthDocument(url);
    } catch (error) {
      reason = error instanceof GatewayError ? String(error.data.reason) : 'unreadable';
    }
  }
  return reason;
}

/**
 * What of an upstream's protected resource metadata disagrees with a `forward` route: a `resource`
 * other than the route's (the audience the client's token is for), or authorization servers that
 * do not include the route's issuer. Empty when they agree, or when the metadata does not say.
 */
export function forwardDisagreements(
  config: ResourceServerAuthConfig,
  metadata: Record<string, unknown>,
): string[] {
  const found: string[] = [];
  const { resource } = metadata;
  if (typeof resource === 'string' && !sameIssuer(resource, config.resource))
    found.push(`it names the resource ${shown(resource)}, not the route's ${config.resource}`);
  const servers = Array.isArray(metadata.authorization_servers)
    ? metadata.authorization_servers.filter((server): server is string => typeof server === 'string')
    : [];
  if (servers.length > 0 && !servers.some((server) => sameIssuer(server, config.issuer)))
    found.push(
      `its authorization servers (${servers.slice(0, 4).map(shown).join(', ')}) do not include the route's issuer ${config.issuer}`,
    );
  return found;
}

/**
 * At the start of a `forward` route (and when a reload changes it): reads the upstream's own
 * protected resource metadata and warns (`auth.forward_mismatch`) when it names another resource
 * or authorization server than the route's: the upstream then likely refuses the client's token,
 * whose audience is the route. A warning, never a refusal: the operator's agreement with the
 * upstream (docs/oauth.md) is not something the gateway can see. Metadata that cannot be read is
 * noted at debug level.
 */
export async function checkForwardedUpstream(
  server: string,
  upstreamUrl: string,
  config: ResourceServerAuthConfig,
  logger: GatewayLogger,
): Promise<void> {
  const metadata = await upstreamResourceMetadata(upstreamUrl);
  if (typeof metadata === 'string') {
    logger.debug(
      { event: 'auth.forward_unchecked', server, reason: metadata },
      "the upstream's protected resource metadata could not be read: the forward route is not compared with it",
    );
    return;
  }
  const found = forwardDisagreements(config, metadata);
  if (found.length === 0) {
    logger.debug(
      { event: 'auth.forward_checked', server },
      "the upstream's protected resource metadata agrees with the forward route",
    );
    return;
  }
  logger.warn(
    { event: 'auth.forward_mismatch', server, upstream: new URL(upstreamUrl).origin },
    `upstreamCredential forward sends the client's token for ${config.resource} to an upstream whose own protected resource metadata disagrees: ${found.join('; ')}. The upstream will refuse the token unless its operator made it accept the route's audience and issuer (docs/oauth.md)`,
  );
}
