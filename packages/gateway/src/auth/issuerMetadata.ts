import { GatewayError } from '../errors.js';
import { fetchAuthDocument } from './authFetch.js';

/** What the gateway reads of an identity provider's metadata (RFC 8414 / OpenID Connect discovery). */
export interface IssuerMetadata {
  readonly issuer: string;
  readonly jwksUri: string | undefined;
  readonly tokenEndpoint: string | undefined;
  readonly introspectionEndpoint: string | undefined;
}

/** The metadata URLs of an issuer, in the order RFC 8414 §3.1 and the MCP authorization spec try them. */
export function issuerMetadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const urls = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
  ];
  if (path !== '') urls.push(`${url.origin}${path}/.well-known/openid-configuration`);
  return urls;
}

const stringOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Fetches an issuer's metadata; the document must name that issuer exactly (RFC 8414 §3.3). */
export async function discoverIssuer(issuer: string): Promise<IssuerMetadata> {
  let lastError: unknown;
  for (const url of issuerMetadataUrls(issuer)) {
    let document: Record<string, unknown>;
    try {
      document = await fetchAuthDocument(url);
    } catch (error) {
      lastError = error;
      continue;
    }
    if (document.issuer !== issuer)
      throw new GatewayError(
        'GW_AUTH_PROVIDER_UNAVAILABLE',
        `the metadata of ${new URL(issuer).origin} names another issuer`,
        { url: new URL(url).origin, reason: 'issuer_mismatch' },
      );
    return {
      issuer,
      jwksUri: stringOf(document.jwks_uri),
      tokenEndpoint: stringOf(document.token_endpoint),
      introspectionEndpoint: stringOf(document.introspection_endpoint),
    };
  }
  throw lastError;
}

/** The issuer's metadata, fetched once (again after a failure): what a route's verifier and credentials share. */
export function issuerMetadataOnce(issuer: string): () => Promise<IssuerMetadata> {
  let metadata: Promise<IssuerMetadata> | undefined;
  return () => {
    metadata ??= discoverIssuer(issuer).catch((error: unknown) => {
      metadata = undefined;
      throw error;
    });
    return metadata;
  };
}
