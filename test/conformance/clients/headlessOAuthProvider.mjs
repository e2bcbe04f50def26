// An OAuthClientProvider (same interface in SDK v1 and v2) that keeps everything in memory and
// plays the browser: it fetches the authorization URL without following the redirect and keeps the
// code from its Location. The conformance scenarios' authorization endpoints redirect at once.

/**
 * The scope the authorization server granted with each access token this process received (its
 * token response's `scope`), by token: what the gateway paths' introspection endpoint
 * (introspectionOracle.mjs) answers for that token, as the authorization server would.
 */
export const grantedScopes = new Map();

/** In-memory OAuth client state; the "browser step" is one fetch of the authorization URL. */
export class HeadlessOAuthProvider {
  #redirectUrl;
  #clientName;
  #clientMetadataUrl;
  #clientInformation;
  #tokens;
  #codeVerifier;
  #code;

  constructor(redirectUrl, clientName, clientMetadataUrl) {
    this.#redirectUrl = redirectUrl;
    this.#clientName = clientName;
    this.#clientMetadataUrl = clientMetadataUrl;
  }

  get redirectUrl() {
    return this.#redirectUrl;
  }

  get clientMetadata() {
    return { client_name: this.#clientName, redirect_uris: [this.#redirectUrl] };
  }

  get clientMetadataUrl() {
    return this.#clientMetadataUrl;
  }

  clientInformation() {
    return this.#clientInformation;
  }

  saveClientInformation(information) {
    this.#clientInformation = information;
  }

  tokens() {
    return this.#tokens;
  }

  saveTokens(tokens) {
    this.#tokens = tokens;
    if (typeof tokens.scope === 'string') grantedScopes.set(tokens.access_token, tokens.scope);
  }

  saveCodeVerifier(verifier) {
    this.#codeVerifier = verifier;
  }

  codeVerifier() {
    if (this.#codeVerifier === undefined) throw new Error('no code verifier saved');
    return this.#codeVerifier;
  }

  async redirectToAuthorization(authorizationUrl) {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (location === null)
      throw new Error(`the authorization endpoint answered ${response.status} without a redirect`);
    const code = new URL(location).searchParams.get('code');
    if (code === null) throw new Error('the authorization redirect carries no code');
    this.#code = code;
  }

  /** The code caught by the last redirectToAuthorization. */
  authorizationCode() {
    if (this.#code === undefined) throw new Error('no authorization code');
    return this.#code;
  }
}
