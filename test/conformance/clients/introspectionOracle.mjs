// An RFC 7662 introspection endpoint for the conformance scenarios' tokens, on 127.0.0.1.
//
// The suite's authorization servers issue opaque tokens ("test-token-<time>", "cc-token-...") and
// offer neither introspection nor JWKS; the scenario's own MCP server accepts a token by its prefix
// (the suite's MockTokenVerifier). A toolpin route in resource-server mode must validate every
// token, so the harness gives it this endpoint, which applies the same rule and vouches for the
// issuer and audience (the route) the route was configured with, and for the scope the scenario's
// authorization server granted with the token when the harness's client saw it (its token
// response's `scope`: needed for step-up, where a token of more scope follows one of less), else
// the route's scopes. Audience enforcement is therefore not what these runs show;
// test/gateway/oauthResourceServer.test.ts covers it with a real identity provider.
import { createServer } from 'node:http';
import { URLSearchParams } from 'node:url';

const ACCEPTED_PREFIXES = ['test-token', 'cc-token'];
const LIFETIME_SECONDS = 3600;

function readBody(request) {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => {
      body += chunk;
      if (body.length > 65_536) request.destroy(new Error('introspection request too large'));
    });
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

function clientAuthenticated(request, form, clientId, clientSecret) {
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
  const plainBasic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  const header = request.headers.authorization;
  if (header === basic || header === plainBasic) return true;
  return form.get('client_id') === clientId && form.get('client_secret') === clientSecret;
}

/**
 * Starts the endpoint. `claims(token)` gives `{ iss, aud, scope }` for an accepted token (read at
 * each request: the route's URL is known only once the gateway listens, a token's scope once it is
 * granted).
 */
export async function startIntrospectionOracle({ clientId, clientSecret, claims }) {
  const introspected = [];
  const server = createServer(async (request, response) => {
    const form = new URLSearchParams(await readBody(request));
    if (request.method !== 'POST' || !clientAuthenticated(request, form, clientId, clientSecret)) {
      response.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":"invalid_client"}');
      return;
    }
    const token = form.get('token') ?? '';
    const active = ACCEPTED_PREFIXES.some((prefix) => token.startsWith(prefix));
    introspected.push(active);
    const now = Math.floor(Date.now() / 1000);
    const body = active
      ? {
          active,
          ...claims(token),
          sub: 'conformance-client',
          client_id: 'conformance-client',
          token_type: 'Bearer',
          iat: now,
          exp: now + LIFETIME_SECONDS,
        }
      : { active };
    response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    endpoint: `http://127.0.0.1:${port}/introspect`,
    introspected,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
