import { resourceServerAuthSchema } from '../../src/config/authSchema.js';
import { stepUpChallenge } from '../../src/auth/stepUp.js';

// When an upstream's 403 becomes the route's own step-up challenge (docs/oauth.md, step-up), and
// when it stays -32041: the decision over the route's configuration and the upstream's header.

const ROUTE = 'https://mcp.example.com/files/mcp';
const METADATA = 'https://mcp.example.com/.well-known/oauth-protected-resource/files/mcp';
const UPSTREAM_403 =
  'Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://files.internal/.well-known/oauth-protected-resource/mcp"';

function route(upstreamCredential: Record<string, unknown>) {
  return resourceServerAuthSchema.parse({
    mode: 'resource-server',
    resource: ROUTE,
    issuer: 'https://login.example.com',
    scopes: ['files:read'],
    upstreamCredential,
  });
}

const forward = route({ kind: 'forward' });
const exchange = route({ kind: 'exchange', clientId: 'toolpin-gateway' });

describe('stepUpChallenge', () => {
  test.each([
    ['forward', forward],
    ['exchange', exchange],
  ])('%s: the route challenges with its own metadata and the scope the upstream asked for', (_kind, auth) => {
    const challenge = stepUpChallenge(auth, 403, UPSTREAM_403);
    expect(challenge).toEqual({
      header:
        `Bearer resource_metadata="${METADATA}", scope="files:read files:write", error="insufficient_scope", ` +
        'error_description="the upstream asks for more scope than this token carries"',
      body: {
        error: 'insufficient_scope',
        error_description: 'the upstream asks for more scope than this token carries',
      },
    });
    // The upstream's own metadata URL never reaches the client.
    expect(challenge?.header).not.toContain('files.internal');
  });

  test("the route's scopes come first and are kept when the upstream names others", () => {
    const header = stepUpChallenge(forward, 403, 'Bearer error="insufficient_scope", scope="admin"')?.header;
    expect(header).toContain('scope="files:read admin"');
  });

  test.each([
    ['static', route({ kind: 'static', headersFromEnv: { authorization: 'FILES_TOKEN' } })],
    [
      'client-credentials',
      route({ kind: 'client-credentials', clientId: 'gw', clientSecretEnv: 'GW_SECRET' }),
    ],
    ['exchange with a fixed scope', route({ kind: 'exchange', clientId: 'gw', scope: 'files' })],
  ])("%s: the gateway's own credential was refused, no challenge", (_kind, auth) => {
    expect(stepUpChallenge(auth, 403, UPSTREAM_403)).toBeUndefined();
  });

  test.each([
    ['a 401', 401, UPSTREAM_403],
    ['another 403 error', 403, 'Bearer error="invalid_token", scope="files:write"'],
    ['no scope', 403, 'Bearer error="insufficient_scope"'],
    ['no challenge', 403, undefined],
    ['another scheme', 403, 'Basic realm="files", error="insufficient_scope", scope="x"'],
    ['a scope that is not scope-tokens', 403, 'Bearer error="insufficient_scope", scope="a\\"b"'],
    ['a scope of control bytes', 403, 'Bearer error="insufficient_scope", scope="a\tb\x7f"'],
    ['a header the fetch API refuses', 403, 'Bearer error="insufficient_scope", scope="a\r\nb"'],
    [
      'too many scopes',
      403,
      `Bearer error="insufficient_scope", scope="${Array.from({ length: 33 }, (_, i) => `s${i}`).join(' ')}"`,
    ],
  ])('%s: not a step-up the client can make', (_label, status, header) => {
    expect(stepUpChallenge(forward, status, header)).toBeUndefined();
  });
});
