/** What replaces a credential in a URL shown as text. */
export const REDACTED = '[redacted]';

// Parameter names are compared lowercased with "-", "_", "." and spaces removed, so `api_key`,
// `API-Key`, `apiKey` and `x-api-key` are one name. A name containing any of these is a credential:
// wider than any one vendor's list on purpose (a harmless value hidden costs nothing).
const SECRET_PARTS = [
  'key',
  'token',
  'secret',
  'pass',
  'pwd',
  'auth',
  'sig',
  'credential',
  'session',
  'jwt',
  'cookie',
  'bearer',
  'private',
];
const SECRET_NAMES = new Set(['code', 'pw', 'k']);

// A URL inside free text: a scheme, "://", then everything up to white space or a quote; the
// punctuation that ends a sentence or a clause is left outside it ("cannot connect to <url>: …").
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+?(?=[.,;:!?)\]}]*(?:[\s"'<>`]|$))/gi;

/** True when a query or fragment parameter of this name carries a credential. */
export function isSecretParam(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    // A name that does not decode is compared as written.
  }
  const normalized = decoded.toLowerCase().replace(/[-_.\s]/g, '');
  return SECRET_NAMES.has(normalized) || SECRET_PARTS.some((part) => normalized.includes(part));
}

function redactParams(params: string): string {
  return params
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      return equals >= 0 && isSecretParam(name) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
}

/**
 * A URL fit for logs, errors and status output: the userinfo (user and password) is replaced by
 * `[redacted]`, and so is the value of every query or fragment parameter whose name marks a
 * credential (`key`, `token`, `api_key`, `access_token`, `secret`, `password`, `auth`, `sig`, …,
 * case-insensitive); a fragment that is not `name=value` pairs is redacted whole. A URL with
 * nothing to redact is returned as written; one with something is returned as the URL parser
 * spells it. Text that does not parse as a URL is not shown at all. Secrets in the path cannot be
 * told from a path and stay.
 */
export function redactUrl(url: string): string {
  if (!URL.canParse(url)) return `${REDACTED} (not a URL)`;
  const parsed = new URL(url);
  // An opaque URL (mailto:, data:) has no authority: nothing of it is shown but its scheme.
  if (!parsed.href.startsWith(`${parsed.protocol}//`)) return `${parsed.protocol}${REDACTED}`;
  const userinfo = parsed.username !== '' || parsed.password !== '' ? `${REDACTED}@` : '';
  const search = parsed.search === '' ? '' : `?${redactParams(parsed.search.slice(1))}`;
  const fragment = parsed.hash.slice(1);
  const hash = parsed.hash === '' ? '' : `#${fragment.includes('=') ? redactParams(fragment) : REDACTED}`;
  if (userinfo === '' && search === parsed.search && hash === parsed.hash) return url;
  return `${parsed.protocol}//${userinfo}${parsed.host}${parsed.pathname}${search}${hash}`;
}

/** Free text (an error message, a log field) with every URL in it passed through {@link redactUrl}. */
export function redactUrlsInText(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (url) =>
    URL.canParse(url) ? redactUrl(url) : url.replace(/\/\/[^/?#\s]*@/, `//${REDACTED}@`),
  );
}
