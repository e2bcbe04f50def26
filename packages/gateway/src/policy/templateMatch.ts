import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { RE2JS } from 're2js';

/** The members of the SDK's UriTemplate its own `match` builds its expression from (not in its types). */
interface TemplateParts {
  readonly parts: readonly (string | object)[];
  partToRegExp(part: object): readonly { readonly pattern: string }[];
  escapeRegExp(text: string): string;
}

/**
 * The expression the SDK's `UriTemplate.match` tests a URI with (RFC 6570 as the SDK's servers
 * route a resources/read), or undefined when the SDK's template no longer has the parts it is built
 * from. Throws when the SDK cannot read the template.
 */
function sdkPattern(uriTemplate: string): string | undefined {
  const template = new UriTemplate(uriTemplate) as unknown as Partial<TemplateParts>;
  const { parts } = template;
  if (!Array.isArray(parts) || typeof template.partToRegExp !== 'function') return undefined;
  if (typeof template.escapeRegExp !== 'function') return undefined;
  let pattern = '^';
  for (const part of parts as readonly (string | object)[])
    pattern +=
      typeof part === 'string'
        ? template.escapeRegExp(part)
        : template
            .partToRegExp(part)
            .map((piece) => piece.pattern)
            .join('');
  return `${pattern}$`;
}

/**
 * True when `uri` is one the resource template `uriTemplate` expands to, as the SDK's servers route
 * a resources/read to a template. The SDK's expression runs on a linear-time engine (re2js): a
 * template comes from an upstream's listing, and `(.+)` parts in a row would make a backtracking
 * engine take polynomial time on a long URI, stalling every session. RE2's `.` matches a superset of
 * ECMAScript's (it refuses only `\n`), so it never misses a URI the SDK would route to the template.
 * A template (or a URI) that cannot be read is taken as matching: a read it cannot tell apart is
 * decided as the template's (fail closed).
 */
export function uriMatchesTemplate(uriTemplate: string, uri: string): boolean {
  try {
    const pattern = sdkPattern(uriTemplate);
    return pattern === undefined || RE2JS.compile(pattern).matches(uri);
  } catch {
    return true;
  }
}
