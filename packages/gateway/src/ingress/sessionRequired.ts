import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors.js';
import type { CatalogRefresh } from '../checkpoint/serverCheckpoint.js';
import type { SurfaceListing } from '../wire/listedSurfaces.js';
import { headerValue } from '../wire/httpHeaders.js';

/**
 * The one answer of every route to a 2025-era request other than initialize that names no session
 * where one is needed (HTTP 400, -32000): the bridged routes answer it at once, the HTTP proxy when
 * the upstream refuses to list for a client without a session (docs/boundary.md#error-codes).
 */
export const SESSION_REQUIRED_MESSAGE = 'Bad Request: Mcp-Session-Id header is required (initialize first)';

/** The upstream's refusal of a listing sent without a session: HTTP 400, as the SDK answers it. */
function isSessionRefusal(error: unknown): boolean {
  return (
    error instanceof GatewayError && error.code === 'GW_CATALOG_UNAVAILABLE' && error.data.status === 400
  );
}

/**
 * For a 2025-era call without `Mcp-Session-Id` whose catalog must be listed first: lists before the
 * call is screened, so that an upstream that needs a session (it refuses the listing with HTTP 400)
 * makes the request `session_required`, answered like the bridged routes, with no refusal alert.
 * Otherwise returns the refresh the checkpoint then uses: the pages already listed, or the failure (a
 * stateless upstream lists without a session, and its calls are decided as usual). A request that
 * needs no listing first gets `refresh` back at once (no promise: most calls are decided in the turn
 * they arrive in).
 */
export function listWithoutSession(
  headers: IncomingHttpHeaders,
  needsListing: boolean,
  refresh: CatalogRefresh,
  spec: SurfaceListing,
): CatalogRefresh | Promise<CatalogRefresh | 'session_required'> {
  if (!needsListing || headerValue(headers, 'mcp-session-id') !== undefined) return refresh;
  return listFirst(refresh, spec);
}

async function listFirst(
  refresh: CatalogRefresh,
  spec: SurfaceListing,
): Promise<CatalogRefresh | 'session_required'> {
  try {
    const pages = await refresh(spec);
    return () => Promise.resolve(pages);
  } catch (error) {
    if (isSessionRefusal(error)) return 'session_required';
    return () => Promise.reject(error as Error);
  }
}
