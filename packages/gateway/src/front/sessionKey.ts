import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { headerValue } from '../wire/httpHeaders.js';

/**
 * Whose catalog a request acts on: the MCP session, bound to the credential that opened it, or,
 * without a session (2026-07-28, stateless servers), the credential alone. Catalogs legitimately
 * differ per user and per session, so each decision uses its own observation.
 */
export function sessionKeyOf(headers: IncomingHttpHeaders): string {
  // One-shot hash (no Hash object per request); the same bytes as authorization, "\n", cookie.
  const credential = hash(
    'sha256',
    `${headerValue(headers, 'authorization') ?? ''}\n${headerValue(headers, 'cookie') ?? ''}`,
    'base64url',
  );
  const session = headerValue(headers, 'mcp-session-id');
  return session === undefined ? `credential:${credential}` : `session:${session}:${credential}`;
}
