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

// A URL inside free text, for its query and fragment: a scheme, "://", then everything up to white
// space or a quote; the punctuation that ends a sentence or a clause is left outside it ("cannot
// connect to <url>: …"). Userinfo is not left to it (see redactUserinfoInText).
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

/**
 * Free text with the userinfo of every `scheme://userinfo@` authority replaced by `[redacted]`,
 * found without parsing a URL: the authority runs from `://` to the first `/`, `?` or `#` (RFC 3986
 * section 3.2) and its userinfo is everything before the last `@` in it, whatever it holds (quotes,
 * spaces, `@`, bad `%`-escapes). A password the URL parser leaves as written (`'`) or that cuts a
 * URL short in text must still not show. It may hide more than a password (an `@` later in a text
 * with no `/` between): a harmless value hidden costs nothing.
 */
export function redactUserinfoInText(text: string): string {
  let out = '';
  let copied = 0;
  let start = text.indexOf('://');
  while (start >= 0) {
    const authority = start + 3;
    let end = authority;
    let at = -1;
    for (; end < text.length; end++) {
      const char = text.charCodeAt(end);
      if (char === 0x2f || char === 0x3f || char === 0x23) break; // "/", "?", "#"
      if (char === 0x40) at = end; // "@"
    }
    if (at >= 0) {
      out += `${text.slice(copied, authority)}${REDACTED}`;
      copied = at;
    }
    // The "/" that ended this authority may be the first of the next "://" (its ":" is one before):
    // each character is scanned once or twice, so the text is read in linear time.
    start = end >= text.length ? -1 : text.indexOf('://', Math.max(end - 1, authority));
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Free text (an error message, a log field) with the userinfo of every URL redacted (see
 * {@link redactUserinfoInText}), then every URL in it passed through {@link redactUrl} for its
 * credential parameters.
 */
export function redactUrlsInText(text: string): string {
  if (!text.includes('://')) return text;
  return redactUserinfoInText(text).replace(URL_IN_TEXT, (url) => (URL.canParse(url) ? redactUrl(url) : url));
}
