import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { ResourceServerAuthConfig } from '../config/index.js';
import { bearerChallenge } from './resourceMetadata.js';

/** A scope-token (RFC 6749 §3.3), bounded: what of an upstream's `scope` may reach the client. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/;
/** At most this many scopes are taken from an upstream's challenge (else it is not relayed). */
const MAX_ASKED_SCOPES = 32;

/** The route's own 403 for an upstream's `insufficient_scope` that the client can step up to. */
export interface StepUpChallenge {
  /** The route's `WWW-Authenticate`: its `resource_metadata`, the scope a new token needs, the error. */
  readonly header: string;
  /** The body of the 403, as the route's own refusals have it (RFC 6750 error codes). */
  readonly body: { readonly error: 'insufficient_scope'; readonly error_description: string };
}

/**
 * True when what the upstream receives follows the client's token: the token itself (`forward`)
 * or an exchange of it that takes its scopes (`exchange` without a fixed `scope`). A token of more
 * scope, asked by the client, then reaches the upstream; with the other kinds the credential is
 * the gateway's own and a new client token changes nothing.
 */
export function credentialFollowsClient(config: ResourceServerAuthConfig): boolean {
  const credential = config.upstreamCredential;
  return credential.kind === 'forward' || (credential.kind === 'exchange' && credential.scope === undefined);
}

/** The `error` and `scope` of a Bearer challenge, read as the SDK's clients read them; none when it does not parse. */
function challengeParams(wwwAuthenticate: string): { error?: string; scope?: string } {
  let headers: Headers;
  try {
    headers = new Headers({ 'www-authenticate': wwwAuthenticate });
  } catch {
    return {};
  }
  return extractWWWAuthenticateParams(new Response(null, { headers }));
}

/**
 * The route's challenge for an upstream's `403` with `error="insufficient_scope"` (RFC 6750 §3.1),
 * when the client can earn the scope (credentialFollowsClient): the route's own `resource_metadata`
 * (never the upstream's: the client's token is for the route), and as `scope` the route's scopes
 * and those the upstream asked for, so that an MCP client steps up as it would directly. Undefined
 * otherwise (another status or error, no scope, a scope that is not scope-tokens): the caller
 * answers -32041 as for any refusal of the upstream.
 */
export function stepUpChallenge(
  config: ResourceServerAuthConfig,
  status: number,
  wwwAuthenticate: string | undefined,
): StepUpChallenge | undefined {
  if (status !== 403 || wwwAuthenticate === undefined || !credentialFollowsClient(config)) return undefined;
  const { error, scope } = challengeParams(wwwAuthenticate);
  if (error !== 'insufficient_scope' || scope === undefined) return undefined;
  const asked = scope.split(' ').filter((token) => token !== '');
  if (
    asked.length === 0 ||
    asked.length > MAX_ASKED_SCOPES ||
    !asked.every((token) => SCOPE_TOKEN.test(token))
  )
    return undefined;
  const description = 'the upstream asks for more scope than this token carries';
  const scopes = [...new Set([...config.scopes, ...asked])];
  return {
    header: bearerChallenge(config, { error: 'insufficient_scope', description }, scopes),
    body: { error: 'insufficient_scope', error_description: description },
  };
}
