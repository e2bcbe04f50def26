import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** RFC 9110 §7.6.1 hop-by-hop headers, plus the proxy ones: never forwarded in either direction. */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The hop-by-hop headers of one message: the fixed set, plus every header its `Connection`
 * header names (RFC 9110 §7.6.1), which a proxy must not forward either.
 */
export function hopByHopNames(headers: OutgoingHttpHeaders | IncomingHttpHeaders): ReadonlySet<string> {
  const named = headers['connection'];
  // The usual `Connection: keep-alive` (or none) names nothing new: no set to build per message.
  if (
    named === undefined ||
    (typeof named === 'string' && HOP_BY_HOP_HEADERS.has(named.trim().toLowerCase()))
  )
    return HOP_BY_HOP_HEADERS;
  const names = new Set(HOP_BY_HOP_HEADERS);
  for (const value of Array.isArray(named) ? named : [named]) {
    if (typeof value !== 'string') continue;
    for (const name of value.split(',')) if (name.trim() !== '') names.add(name.trim().toLowerCase());
  }
  return names;
}

/**
 * A copy of the headers without hop-by-hop ones and without `omit` (a name, or the names it is true
 * for): built, never deleted from (a delete turns the copy into a slow dictionary object).
 */
export function copyEndToEnd(
  headers: OutgoingHttpHeaders | IncomingHttpHeaders,
  omit?: string | ((name: string) => boolean),
): OutgoingHttpHeaders {
  const hopByHop = hopByHopNames(headers);
  const out: OutgoingHttpHeaders = {};
  const skip = typeof omit === 'function' ? omit : undefined;
  for (const name in headers) {
    if (hopByHop.has(name) || name === omit || skip?.(name) === true) continue;
    out[name] = headers[name];
  }
  return out;
}

/** The first value of a request header, lower-cased name. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** True when the client's Accept header takes JSON (or says nothing, which JSON-RPC clients mean). */
export function acceptsJson(headers: IncomingHttpHeaders): boolean {
  const accept = headerValue(headers, 'accept');
  return accept === undefined || accept.includes('application/json') || accept.includes('*/*');
}
