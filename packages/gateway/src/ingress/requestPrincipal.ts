import type { IncomingHttpHeaders } from 'node:http';
import type { Principal } from '../auth/tokenVerifier.js';

// The principal (issuer and subject) a resource-server route verified for a request, attached to
// that request's headers object: session keys and credential checks read it where they read the
// headers, so a client whose token is refreshed keeps its session and its observations.
const principals = new WeakMap<IncomingHttpHeaders, { owner: string; token: Principal }>();

/** Records the verified principal of the request whose headers these are (`owner`: issuer and subject). */
export function setPrincipal(headers: IncomingHttpHeaders, owner: string, token: Principal): void {
  principals.set(headers, { owner, token });
}

/** The verified principal (issuer and subject) of the request whose headers these are, if its route verifies tokens. */
export function principalOf(headers: IncomingHttpHeaders): string | undefined {
  return principals.get(headers)?.owner;
}

/** What the token a resource-server route verified for this request says, if it verified one. */
export function verifiedTokenOf(headers: IncomingHttpHeaders): Principal | undefined {
  return principals.get(headers)?.token;
}

// The principal of the gateway file's `principals` block a request speaks for (docs/scopes.md),
// set by the route's principal gate (ingress/principalGate.ts).
const scopePrincipals = new WeakMap<IncomingHttpHeaders, string>();

/** Records the `principals` entry the request whose headers these are speaks for. */
export function setScopePrincipal(headers: IncomingHttpHeaders, name: string): void {
  scopePrincipals.set(headers, name);
}

/** The `principals` entry the request speaks for; undefined while the gateway has no `principals` block. */
export function scopePrincipalOf(headers: IncomingHttpHeaders): string | undefined {
  return scopePrincipals.get(headers);
}
