import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { hopByHopNames } from '../wire/httpHeaders.js';
import { carriesIdentity } from './forwardedCredentials.js';
import { keyForPrincipal } from '../policy/sessionPrincipal.js';
import { principalOf, scopePrincipalOf } from './requestPrincipal.js';

/**
 * Whose catalog a request acts on: the MCP session, bound to the caller that opened it, or,
 * without a session (2026-07-28, stateless servers), the caller alone. Catalogs legitimately
 * differ per user and per session, so each decision uses its own observation. The caller is every
 * header that reaches the upstream with the request and may change what it answers
 * (`Authorization`, `Cookie`, but also an `X-Api-Key` or a tenant header): two callers the
 * upstream can tell apart never share a catalog. Headers that only trace one request
 * (`traceparent`, `x-request-id`, …) are left out, so a caller keeps one catalog across its calls.
 * `principal`: the issuer and subject a resource-server route verified (principalOf these headers).
 * `scope`: the `principals` entry the request speaks for (scopePrincipalOf these headers): the key
 * then begins with it (policy/sessionPrincipal.ts), so every checkpoint decides under its scope and
 * each principal's catalogs are its own.
 */
export function sessionKeyOf(
  headers: IncomingHttpHeaders,
  principal: string | undefined = principalOf(headers),
  scope: string | undefined = scopePrincipalOf(headers),
): string {
  const hopByHop = hopByHopNames(headers);
  // On a resource-server route the verified issuer and subject are the caller, not the token's
  // bytes (a refreshed token keeps its session); Authorization is then the gateway's own credential.
  let identity = principal === undefined ? '' : `principal:${principal}\n`;
  // The few headers that identify, in name order (most requests carry none, or one or two).
  const names: string[] = [];
  for (const name in headers) {
    if (name === 'mcp-session-id' || !carriesIdentity(name, hopByHop)) continue;
    if (principal !== undefined && name === 'authorization') continue;
    names.push(name);
  }
  if (names.length > 1) names.sort();
  for (const name of names) {
    const value = headers[name];
    identity += `${name}:${Array.isArray(value) ? value.join(', ') : (value ?? '')}\n`;
  }
  const caller = callerHash(identity);
  const session = headers['mcp-session-id'];
  const id = Array.isArray(session) ? session[0] : session;
  return keyForPrincipal(scope, id === undefined ? `credential:${caller}` : `session:${id}:${caller}`);
}

// A caller sends the same identifying headers request after request: its hash is remembered
// (bounded: the oldest half is forgotten when full).
const MAX_CALLERS = 4096;
const callers = new Map<string, string>();

/** The SHA-256 of a caller's identity (base64url), hashed once per distinct identity. */
function callerHash(identity: string): string {
  let caller = callers.get(identity);
  if (caller !== undefined) return caller;
  // One-shot hash (no Hash object).
  caller = hash('sha256', identity, 'base64url');
  if (callers.size >= MAX_CALLERS)
    for (const old of [...callers.keys()].slice(0, MAX_CALLERS / 2)) callers.delete(old);
  callers.set(identity, caller);
  return caller;
}
