import type { IncomingHttpHeaders } from 'node:http';
import { hopByHopNames } from '../wire/httpHeaders.js';

/** Headers that describe one request's body or framing, not the session or the caller. */
const PER_REQUEST = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'accept-encoding',
  'last-event-id',
  'mcp-method',
  'mcp-name',
  'expect',
]);

/**
 * The headers a gateway-initiated request (fetch on miss) carries: everything that identifies the
 * client's session and credentials, so the upstream answers what it would answer that client.
 */
export function forwardedCredentials(
  headers: IncomingHttpHeaders,
  configured: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const hopByHop = hopByHopNames(headers);
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || PER_REQUEST.has(name) || hopByHop.has(name) || name.startsWith('mcp-param-'))
      continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { ...out, ...configured };
}
