#!/usr/bin/env node
// The client under test for the MCP conformance suite's auth/* client scenarios, written after the
// suite's own example (examples/clients/typescript/everything-client.ts of
// @modelcontextprotocol/conformance 0.1.16): the well-behaved OAuth client, pre-registration,
// client credentials, cross-app access. One program for both SDKs so that the two columns of
// docs/oauth-conformance.md differ only by the SDK.
//
//   node sdkAuthClient.mjs <v1|v2> <server-url>
//
// The conformance runner appends <server-url> and sets MCP_CONFORMANCE_SCENARIO (and, for some
// scenarios, MCP_CONFORMANCE_CONTEXT). The exit code tells the runner whether the client completed.
/* global Headers -- the fetch API's, global since Node 18 */
import { pathToFileURL, URLSearchParams } from 'node:url';
import { runClientProgram } from './clientProgram.mjs';
import { loadSdk } from './loadSdk.mjs';
import { HeadlessOAuthProvider } from './headlessOAuthProvider.mjs';

// The suite's fixed client ID metadata document URL: used as client_id when the authorization
// server advertises client_id_metadata_document_supported (auth/basic-cimd).
const CIMD_CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const REDIRECT_URL = 'http://localhost:3000/callback';

function parseContext() {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  if (raw === undefined) throw new Error('MCP_CONFORMANCE_CONTEXT not set');
  return JSON.parse(raw);
}

/**
 * A fetch that adds the provider's bearer and, on a 401 or 403, runs the SDK's auth() (discovery,
 * registration, PKCE, token request; scope from WWW-Authenticate) and retries once.
 */
function oauthFetch(sdk, provider, serverUrl) {
  const withBearer = async (input, init) => {
    const headers = new Headers(init?.headers);
    const tokens = await provider.tokens();
    if (tokens) headers.set('Authorization', `Bearer ${tokens.access_token}`);
    return fetch(input, { ...init, headers });
  };
  return async (input, init) => {
    let response = await withBearer(input, init);
    if (response.status === 401 || response.status === 403) {
      await authorize(sdk, provider, serverUrl, response);
      response = await withBearer(input, init);
    }
    if (response.status === 401 || response.status === 403) {
      throw new sdk.UnauthorizedError(`Authentication failed for ${String(input)}`);
    }
    return response;
  };
}

async function authorize(sdk, provider, serverUrl, response) {
  const { resourceMetadataUrl, scope } = sdk.extractWWWAuthenticateParams(response);
  const options = { serverUrl, resourceMetadataUrl, scope, fetchFn: fetch };
  let result = await sdk.auth(provider, options);
  if (result === 'REDIRECT') {
    // The scenario's authorization endpoint redirects at once: the provider caught the code.
    result = await sdk.auth(provider, { ...options, authorizationCode: provider.authorizationCode() });
  }
  if (result !== 'AUTHORIZED') throw new sdk.UnauthorizedError(`auth() ended with ${result}`);
}

async function listAndCall(sdk, serverUrl, transportOptions, callTool = true) {
  const client = new sdk.Client(
    { name: `toolpin-conformance-${sdk.name}`, version: '1.0.0' },
    { capabilities: {} },
  );
  const transport = new sdk.StreamableHTTPClientTransport(new URL(serverUrl), transportOptions);
  await client.connect(transport);
  await client.listTools();
  if (callTool) await client.callTool({ name: 'test-tool', arguments: {} });
  await transport.close();
}

async function runAuthorizationCode(sdk, serverUrl) {
  const provider = new HeadlessOAuthProvider(
    REDIRECT_URL,
    `toolpin-conformance-${sdk.name}`,
    CIMD_CLIENT_METADATA_URL,
  );
  await listAndCall(sdk, serverUrl, { fetch: oauthFetch(sdk, provider, serverUrl) });
}

async function runPreRegistration(sdk, serverUrl) {
  const ctx = parseContext();
  const provider = new HeadlessOAuthProvider(REDIRECT_URL, `toolpin-conformance-${sdk.name}`);
  provider.saveClientInformation({
    client_id: ctx.client_id,
    client_secret: ctx.client_secret,
    redirect_uris: [REDIRECT_URL],
  });
  await listAndCall(sdk, serverUrl, { fetch: oauthFetch(sdk, provider, serverUrl) }, false);
}

async function runClientCredentialsJwt(sdk, serverUrl) {
  const ctx = parseContext();
  const authProvider = new sdk.PrivateKeyJwtProvider({
    clientId: ctx.client_id,
    privateKey: ctx.private_key_pem,
    algorithm: ctx.signing_algorithm ?? 'ES256',
  });
  await listAndCall(sdk, serverUrl, { authProvider }, false);
}

async function runClientCredentialsBasic(sdk, serverUrl) {
  const ctx = parseContext();
  const authProvider = new sdk.ClientCredentialsProvider({
    clientId: ctx.client_id,
    clientSecret: ctx.client_secret,
  });
  await listAndCall(sdk, serverUrl, { authProvider }, false);
}

/** SEP-990: IdP ID token -> ID-JAG (RFC 8693 at the IdP) -> access token (RFC 7523 jwt-bearer at the AS). */
async function runCrossAppAccess(sdk, serverUrl) {
  const ctx = parseContext();
  const prm = await sdk.discoverOAuthProtectedResourceMetadata(serverUrl);
  const as = await sdk.discoverAuthorizationServerMetadata(prm.authorization_servers[0]);
  if (as === undefined) throw new Error('no authorization server metadata');
  const idJag = await postForm(ctx.idp_token_endpoint, {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
    audience: as.issuer,
    resource: prm.resource,
    subject_token: ctx.idp_id_token,
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    client_id: ctx.idp_client_id,
  });
  const basic = Buffer.from(`${encodeURIComponent(ctx.client_id)}:${encodeURIComponent(ctx.client_secret)}`);
  const token = await postForm(
    as.token_endpoint,
    { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: idJag.access_token },
    { Authorization: `Basic ${basic.toString('base64')}` },
  );
  const headers = { Authorization: `Bearer ${token.access_token}` };
  await listAndCall(sdk, serverUrl, { requestInit: { headers } });
}

async function postForm(url, fields, headers = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
  if (!response.ok) throw new Error(`POST ${url} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

const SPECIAL_SCENARIOS = {
  'auth/pre-registration': runPreRegistration,
  'auth/client-credentials-jwt': runClientCredentialsJwt,
  'auth/client-credentials-basic': runClientCredentialsBasic,
  'auth/cross-app-access-complete-flow': runCrossAppAccess,
};

/** Runs one scenario with one SDK; throws when the client could not complete. */
export async function runScenario(sdkName, scenario, serverUrl) {
  const sdk = await loadSdk(sdkName);
  const run = SPECIAL_SCENARIOS[scenario] ?? runAuthorizationCode;
  await run(sdk, serverUrl);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runClientProgram((sdkName, serverUrl, scenario) => runScenario(sdkName, scenario, serverUrl));
}
