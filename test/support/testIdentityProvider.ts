import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  exportJWK,
  exportSPKI,
  generateKeyPair,
  jwtVerify,
  createLocalJWKSet,
  SignJWT,
  type JWK,
  type JWTPayload,
  type CryptoKey,
} from 'jose';
import { listenOnLoopback, type LoopbackServer } from '../peers/listen.js';

// A small, real OAuth identity provider for tests, on 127.0.0.1 (node:http): RFC 8414 metadata,
// a JWKS of jose-generated keys, tokens minted by the test, RFC 8693 token exchange and the
// client-credentials grant for registered clients, RFC 7662 introspection (`/introspect`, for
// registered clients: an expired or foreign token is `active: false`; a token minted with
// `introspectedWithout` is answered without those members), each checked (client authentication, the
// audience a client may ask for, the subject token's signature, issuer and expiry), and a record
// of everything it issued. Nothing is mocked: the gateway fetches its metadata and keys over HTTP.
//
//   const idp = await startTestIdentityProvider({
//     clients: { gateway: { secret: 's3cret', audiences: [upstreamUrl] } },
//   });
//   const token = await idp.mint({ sub: 'alice', aud: `${gatewayUrl}/demo/mcp`, scope: 'mcp' });
//   ...
//   idp.exchanges;  // every exchange it granted or refused
//   await idp.close();

/** A client registered at the provider (the gateway, for exchange and client credentials). */
export interface TestClient {
  /** Its client secret (HTTP Basic client authentication, RFC 6749 §2.3.1). */
  readonly secret: string;
  /** The audiences (resources) this client may ask a token for; anything else is refused `invalid_target`. */
  readonly audiences: readonly string[];
}

export interface TestIdentityProviderOptions {
  /** Registered clients by client id. */
  readonly clients?: Readonly<Record<string, TestClient>>;
  /** Lifetime of the tokens the provider issues at its token endpoint, in seconds. @default 300 */
  readonly issuedLifetimeSeconds?: number;
}

/** What a test asks the provider to mint (claims; the defaults make a valid token). */
export interface MintOptions {
  readonly sub: string;
  /** One audience or several. */
  readonly aud: string | readonly string[];
  /** Space-separated scopes (the `scope` claim). */
  readonly scope?: string;
  /** The client the token is issued to (the `azp` claim). @default none */
  readonly azp?: string;
  /** @default the provider's issuer */
  readonly iss?: string;
  /** Seconds from now; negative for an expired token. @default 300 */
  readonly expiresIn?: number;
  /** `nbf`, in seconds from now. */
  readonly notBeforeIn?: number;
  /**
   * Members the provider's introspection leaves out of its answer for this token (RFC 7662 §2.2
   * makes every member but `active` optional: some providers answer without `exp` or `iss`).
   */
  readonly introspectedWithout?: readonly string[];
}

/** One request at the token endpoint, as the provider judged it. */
export interface TokenGrantRecord {
  readonly grantType: string;
  /** The authenticated client, or undefined when authentication failed. */
  readonly clientId: string | undefined;
  /** The requested audience (`audience`, else `resource`). */
  readonly audience: string | undefined;
  /** Exchange: the subject of the subject token, when it verified. */
  readonly subject: string | undefined;
  /** The token issued, or the error answered. */
  readonly accessToken?: string;
  readonly error?: string;
}

export interface TestIdentityProvider {
  /** `http://127.0.0.1:<port>`: the `iss` of its tokens and the base of its metadata. */
  readonly issuer: string;
  readonly jwksUri: string;
  readonly tokenEndpoint: string;
  /** RFC 7662 introspection, HTTP Basic authentication of a registered client. */
  readonly introspectionEndpoint: string;
  /** The public key's SPKI PEM (for attacker tests: an HS256 token "signed" with it). */
  readonly publicKeyPem: string;
  /** Signs a token with the provider's key (RS256, `kid` in its JWKS). */
  mint(options: MintOptions): Promise<string>;
  /** Verifies a token the provider issued for `audience` (what an upstream behind it does). */
  verify(token: string, audience: string): Promise<JWTPayload>;
  /** Every request at the token endpoint, in order. */
  readonly grants: readonly TokenGrantRecord[];
  /** How many times each path was fetched (metadata, JWKS, token). */
  readonly hits: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const KID = 'test-key-1';

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(text);
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The client a Basic Authorization header authenticates, or undefined. */
function authenticate(
  header: string | undefined,
  clients: Readonly<Record<string, TestClient>>,
): string | undefined {
  const match = /^Basic (.+)$/i.exec(header ?? '');
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
  const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
  return clients[id]?.secret === secret && colon > 0 ? id : undefined;
}

/** Starts the provider on 127.0.0.1 with a fresh RS256 key pair. */
export async function startTestIdentityProvider(
  options: TestIdentityProviderOptions = {},
): Promise<TestIdentityProvider> {
  const clients = options.clients ?? {};
  const lifetime = options.issuedLifetimeSeconds ?? 300;
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: KID, alg: 'RS256', use: 'sig' };
  const keySet = createLocalJWKSet({ keys: [jwk] });
  const grants: TokenGrantRecord[] = [];
  /** By `jti`: the members introspection leaves out of its answer for that token. */
  const introspectedWithout = new Map<string, readonly string[]>();
  const hits = new Map<string, number>();
  let issuer = '';

  const sign = (
    claims: JWTPayload,
    expiresIn: number,
    key: CryptoKey = privateKey,
    jti: string = crypto.randomUUID(),
  ): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'at+jwt' })
      .setIssuedAt(now)
      .setExpirationTime(now + expiresIn)
      .setJti(jti)
      .sign(key);
  };

  async function tokenEndpoint(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await readForm(req);
    const grantType = form.get('grant_type') ?? '';
    const clientId = authenticate(req.headers.authorization, clients);
    const audience = form.get('audience') ?? form.get('resource') ?? undefined;
    const refuse = (error: string, subject?: string): void => {
      grants.push({ grantType, clientId, audience, subject, error });
      sendJson(res, error === 'invalid_client' ? 401 : 400, { error });
    };
    if (clientId === undefined) return refuse('invalid_client');
    if (audience === undefined || !clients[clientId]!.audiences.includes(audience))
      return refuse('invalid_target');
    let subject = clientId;
    let scope = form.get('scope') ?? undefined;
    if (grantType === TOKEN_EXCHANGE) {
      if (form.get('subject_token_type') !== ACCESS_TOKEN_TYPE) return refuse('invalid_request');
      try {
        // The subject token must be one of ours, unexpired; any audience (the gateway's route).
        const { payload } = await jwtVerify(form.get('subject_token') ?? '', keySet, { issuer });
        subject = String(payload.sub);
        scope ??= typeof payload.scope === 'string' ? payload.scope : undefined;
      } catch {
        return refuse('invalid_grant');
      }
    } else if (grantType !== 'client_credentials') return refuse('unsupported_grant_type');
    const accessToken = await sign(
      {
        iss: issuer,
        sub: subject,
        aud: audience,
        client_id: clientId,
        ...(scope === undefined ? {} : { scope }),
      },
      lifetime,
    );
    grants.push({ grantType, clientId, audience, subject, accessToken });
    sendJson(res, 200, {
      access_token: accessToken,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: lifetime,
    });
  }

  /** RFC 7662: a registered client asks whether a token of this provider is active, and for what. */
  async function introspectionEndpoint(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = await readForm(req);
    if (authenticate(req.headers.authorization, clients) === undefined)
      return sendJson(res, 401, { error: 'invalid_client' });
    try {
      const { payload } = await jwtVerify(form.get('token') ?? '', keySet, { issuer });
      const answer: Record<string, unknown> = { active: true, token_type: 'Bearer', ...payload };
      for (const member of introspectedWithout.get(String(payload.jti)) ?? []) delete answer[member];
      sendJson(res, 200, answer);
    } catch {
      sendJson(res, 200, { active: false });
    }
  }

  const metadata = (): Record<string, unknown> => ({
    issuer,
    jwks_uri: `${issuer}/jwks`,
    token_endpoint: `${issuer}/token`,
    introspection_endpoint: `${issuer}/introspect`,
    authorization_endpoint: `${issuer}/authorize`,
    grant_types_supported: ['client_credentials', TOKEN_EXCHANGE],
    token_endpoint_auth_methods_supported: ['client_secret_basic'],
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
  });

  const loopback: LoopbackServer = await listenOnLoopback((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server')
      return sendJson(res, 200, metadata());
    if (req.method === 'GET' && path === '/jwks') return sendJson(res, 200, { keys: [jwk] });
    if (req.method === 'POST' && path === '/introspect')
      return void introspectionEndpoint(req, res).catch(() => sendJson(res, 500, { error: 'server_error' }));
    if (req.method === 'POST' && path === '/token')
      return void tokenEndpoint(req, res).catch(() => sendJson(res, 500, { error: 'server_error' }));
    sendJson(res, 404, { error: 'not_found' });
  });
  issuer = `http://127.0.0.1:${loopback.port}`;

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    tokenEndpoint: `${issuer}/token`,
    introspectionEndpoint: `${issuer}/introspect`,
    publicKeyPem: await exportSPKI(publicKey),
    mint: (mint) => {
      const claims: JWTPayload = {
        iss: mint.iss ?? issuer,
        sub: mint.sub,
        aud: typeof mint.aud === 'string' ? mint.aud : [...mint.aud],
        ...(mint.scope === undefined ? {} : { scope: mint.scope }),
        ...(mint.azp === undefined ? {} : { azp: mint.azp }),
        ...(mint.notBeforeIn === undefined ? {} : { nbf: Math.floor(Date.now() / 1000) + mint.notBeforeIn }),
      };
      const jti = crypto.randomUUID();
      if (mint.introspectedWithout !== undefined) introspectedWithout.set(jti, mint.introspectedWithout);
      return sign(claims, mint.expiresIn ?? 300, privateKey, jti);
    },
    verify: async (token, audience) => (await jwtVerify(token, keySet, { issuer, audience })).payload,
    grants,
    hits,
    close: () => loopback.close(),
  };
}
