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
 * Headers that describe one request's path or handling (tracing, caching, the page a browser was
 * on), not the caller: they may differ on every call of one caller.
 */
const PER_CALL = new Set([
  'referer',
  'cache-control',
  'pragma',
  'priority',
  'traceparent',
  'tracestate',
  'baggage',
  'sentry-trace',
  'x-request-id',
  'x-correlation-id',
  'x-amzn-trace-id',
  'x-cloud-trace-context',
  'b3',
  'x-b3-traceid',
  'x-b3-spanid',
  'x-b3-parentspanid',
  'x-b3-sampled',
  'x-b3-flags',
]);

/** True for a header of the client's request that a gateway-initiated request carries too. */
function isForwarded(name: string, hopByHop: ReadonlySet<string>): boolean {
  return (
    !PER_REQUEST.has(name) &&
    !name.startsWith('content-') &&
    !name.startsWith('mcp-param-') &&
    !hopByHop.has(name)
  );
}

/**
 * True for a header that says who the caller is to the upstream: one the gateway forwards and
 * that may change the upstream's answer (not the request's own framing, hop-by-hop, tracing or
 * caching). `hopByHop` is hopByHopNames of the same headers.
 */
export function carriesIdentity(name: string, hopByHop: ReadonlySet<string>): boolean {
  return isForwarded(name, hopByHop) && !PER_CALL.has(name);
}

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
    if (value === undefined || !isForwarded(name, hopByHop)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { ...out, ...configured };
}
