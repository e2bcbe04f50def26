/** An HTTP upstream's URL and headers once the URL's userinfo became an `authorization` header. */
export interface MovedUrlCredentials {
  /** The URL without userinfo, as the URL parser spells it. */
  readonly url: string;
  /** The configured headers, plus `authorization: Basic …` when the URL had userinfo. */
  readonly headers: Readonly<Record<string, string>>;
  /** True when the URL had userinfo (descriptions then show `[redacted]@`). */
  readonly moved: boolean;
}

/** Why the userinfo of a URL cannot become an `authorization` header. */
export interface UrlCredentialsProblem {
  readonly problem: string;
}

const ESCAPE = /%([0-9A-Fa-f]{2})/g;
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

// RFC 3986 section 2.1: "%" and two hex digits is one octet; any other character stands for its
// UTF-8 bytes. An octet sequence that is not UTF-8 is sent as it is (Basic carries octets).
function percentDecode(text: string): Buffer {
  const parts: Buffer[] = [];
  let last = 0;
  for (const match of text.matchAll(ESCAPE)) {
    parts.push(Buffer.from(text.slice(last, match.index), 'utf8'), Buffer.of(parseInt(match[1] ?? '', 16)));
    last = match.index + match[0].length;
  }
  parts.push(Buffer.from(text.slice(last), 'utf8'));
  return Buffer.concat(parts);
}

/**
 * Moves the userinfo of an upstream URL (`http://user:password@host/…`) into an
 * `authorization: Basic base64(user:password)` header (RFC 7617, user and password percent-decoded
 * per RFC 3986). A URL with userinfo cannot be sent as it is: fetch refuses it, and node:http given
 * a host name drops it. Refused (the problem is returned) when an `authorization` header is
 * configured too (which one applies would be a guess), when a `%` does not start an escape, and
 * when the user decodes to a `:` (RFC 7617 user-ids have none). The password is never in a problem.
 */
export function moveUrlCredentials(
  url: string,
  headers: Readonly<Record<string, string>>,
): MovedUrlCredentials | UrlCredentialsProblem {
  if (!URL.canParse(url)) return { problem: 'an absolute URL' };
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return { url, headers, moved: false };
  if (Object.keys(headers).some((name) => name.toLowerCase() === 'authorization'))
    return {
      problem:
        'a URL without userinfo when headers has an authorization header (the userinfo would be a second credential)',
    };
  if (BAD_ESCAPE.test(parsed.username) || BAD_ESCAPE.test(parsed.password))
    return { problem: 'userinfo whose "%" starts a %-escape (write "%" as %25)' };
  const user = percentDecode(parsed.username);
  if (user.includes(':')) return { problem: 'a user name without ":" (RFC 7617), written %3A or not' };
  const basic = Buffer.concat([user, Buffer.from(':'), percentDecode(parsed.password)]).toString('base64');
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.href, headers: { ...headers, authorization: `Basic ${basic}` }, moved: true };
}
