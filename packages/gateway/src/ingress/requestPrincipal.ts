import type { IncomingHttpHeaders } from 'node:http';

// The principal (issuer and subject) a resource-server route verified for a request, attached to
// that request's headers object: session keys and credential checks read it where they read the
// headers, so a client whose token is refreshed keeps its session and its observations.
const principals = new WeakMap<IncomingHttpHeaders, string>();

/** Records the verified principal of the request whose headers these are. */
export function setPrincipal(headers: IncomingHttpHeaders, principal: string): void {
  principals.set(headers, principal);
}

/** The verified principal of the request whose headers these are, if its route verifies tokens. */
export function principalOf(headers: IncomingHttpHeaders): string | undefined {
  return principals.get(headers);
}
