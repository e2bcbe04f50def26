import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { hopByHopNames } from '../wire/httpHeaders.js';
import { carriesIdentity } from './forwardedCredentials.js';
import { principalOf } from './requestPrincipal.js';

/**
 * Whose catalog a request acts on: the MCP session, bound to the caller that opened it, or,
 * without a session (2026-07-28, stateless servers), the caller alone. Catalogs legitimately
 * differ per user and per session, so each decision uses its own observation. The caller is every
 * header that reaches the upstream with the request and may change what it answers
 * (`Authorization`, `Cookie`, but also an `X-Api-Key` or a tenant header): two callers the
 * upstream can tell apart never share a catalog. Headers that only trace one request
 * (`traceparent`, `x-request-id`, …) are left out, so a caller keeps one catalog across its calls.
 * `principal`: the issuer and subject a resource-server route verified (principalOf these headers).
 */
export function sessionKeyOf(
  headers: IncomingHttpHeaders,
  principal: string | undefined = principalOf(headers),
): string {
  const hopByHop = hopByHopNames(headers);
  // On a resource-server route the verified issuer and subject are the caller, not the token's
  // bytes (a refreshed token keeps its session); Authorization is then the gateway's own credential.
  let identity = principal === undefined ? '' : `principal:${principal}\n`;
  for (const name of Object.keys(headers).sort()) {
    if (name === 'mcp-session-id' || !carriesIdentity(name, hopByHop)) continue;
    if (principal !== undefined && name === 'authorization') continue;
    const value = headers[name];
    identity += `${name}:${Array.isArray(value) ? value.join(', ') : (value ?? '')}\n`;
  }
  // One-shot hash (no Hash object per request).
  const caller = hash('sha256', identity, 'base64url');
  const session = headers['mcp-session-id'];
  const id = Array.isArray(session) ? session[0] : session;
  return id === undefined ? `credential:${caller}` : `session:${id}:${caller}`;
}
