import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';

/**
 * True when `uri` is one the resource template `uriTemplate` expands to, as the SDK's servers
 * route a resources/read to a template (`UriTemplate.match`, RFC 6570 as the SDK reads it). A
 * template (or a URI) the SDK cannot read is taken as matching: a read it cannot tell apart is
 * decided as the template's (fail closed).
 */
export function uriMatchesTemplate(uriTemplate: string, uri: string): boolean {
  try {
    return new UriTemplate(uriTemplate).match(uri) !== null;
  } catch {
    return true;
  }
}
