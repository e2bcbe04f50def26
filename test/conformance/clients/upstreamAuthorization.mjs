// What an operator reads off a protected upstream before putting a toolpin route in front of it:
// its authorization server and the scopes it asks for. The harness reads them as an SDK client
// would (one unauthenticated request, then RFC 9728 discovery), because the suite's scenarios start
// their authorization servers on ports picked at run time.
//
// This touches the scenario's MCP server: the request is logged as INFO, and a protected resource
// metadata fetch counts as the suite's `prm-pathbased-requested` check. That check is therefore
// reported as "harness" for the gateway paths (docs/oauth-conformance.md).

/** `{ issuer, scopes }` of the upstream at `serverUrl`, with the SDK's discovery functions. */
export async function readUpstreamAuthorization(sdk, serverUrl) {
  const probe = await fetch(serverUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
  });
  await probe.body?.cancel();
  const { resourceMetadataUrl, scope } = sdk.extractWWWAuthenticateParams(probe);
  let metadata;
  try {
    metadata = await sdk.discoverOAuthProtectedResourceMetadata(serverUrl, { resourceMetadataUrl });
  } catch {
    metadata = undefined;
  }
  // No protected resource metadata: the 2025-03-26 rule, the authorization server is the server's origin.
  const issuer = metadata?.authorization_servers?.[0] ?? new URL(serverUrl).origin;
  const scopes = scope !== undefined ? scope.split(' ') : (metadata?.scopes_supported ?? []);
  return { issuer, scopes };
}
