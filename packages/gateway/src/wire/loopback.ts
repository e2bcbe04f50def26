/** True for a URL (or origin) of this machine: http(s) on localhost, 127.0.0.0/8 or [::1], any port. */
export function isLoopbackUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return isLoopbackHost(url.hostname);
}

/** True for a host name of this machine: `localhost`, 127.0.0.0/8 or ::1 (bracketed or not). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * True when a request's `Host` header names this machine (any port), or there is none (HTTP/1.0):
 * what a listener bound to loopback answers. A browser page whose name was rebound to 127.0.0.1
 * (DNS rebinding) sends its own name.
 */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  return host === undefined || isLoopbackUrl(`http://${host}`);
}
