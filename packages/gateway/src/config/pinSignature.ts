import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { canonicalizeJson } from '@toolpin/digest';
import { isMap, parseDocument } from 'yaml';
import { GatewayError } from '../errors.js';
import { isObject } from '../wire/isObject.js';

/**
 * Signed pins (docs/pin-lifecycle.md#signed-approvals): a pin file's `signature` is a compact JWS
 * (EdDSA, Ed25519; `toolpin approve --sign` makes it with jose) whose payload names the SHA-256 of
 * the file's content: the parsed document without `signature`, in its RFC 8785 form, so comments
 * and layout may change and nothing else may. Verified here synchronously (node:crypto), so a
 * reload checks it in the same step that parses the file.
 */

/** The `typ` of a pin signature's protected header. */
export const PIN_SIGNATURE_TYPE = 'toolpin-pin+jws';

/** A public key the gateway trusts to sign pins: its RFC 7638 thumbprint is the JWS `kid`. */
export interface TrustedKey {
  readonly kid: string;
  readonly key: KeyObject;
  /** Where it was read from, for messages. */
  readonly file: string;
}

/** The gateway's rule for pin signatures: which keys sign, and whether a pin must be signed. */
export interface SignaturePolicy {
  readonly requireSignature: boolean;
  readonly trustedKeys: readonly TrustedKey[];
  /** The keys trusted to sign catalog manifests (`manifestKeys`, docs/manifests.md). @default none */
  readonly manifestKeys?: readonly TrustedKey[];
}

/**
 * The policy of a gateway file that names no key: no signature required, none trusted. Pins a
 * gateway loads are parsed under it rather than under none, so a firstUseManifest is refused
 * (no manifestKeys), never skipped.
 */
export const KEYLESS_POLICY: SignaturePolicy = Object.freeze({ requireSignature: false, trustedKeys: [] });

/** What a JWS signature of a pin states. */
export interface PinSignaturePayload {
  readonly typ: 'toolpin-pin';
  /** The server's name (the route the pin governs). */
  readonly name: string;
  /** sha256: of the RFC 8785 form of the document without `signature`. */
  readonly content: string;
}

/** The digest a pin's signature covers: its document without `signature`, canonical (RFC 8785). */
export function pinContentDigest(document: unknown): string {
  const content = isObject(document)
    ? Object.fromEntries(Object.entries(document).filter(([key]) => key !== 'signature'))
    : document;
  return `sha256:${createHash('sha256').update(canonicalizeJson(content), 'utf8').digest('hex')}`;
}

/** What a signature of this pin document states (its name and content digest). */
export function pinSignaturePayload(document: unknown): PinSignaturePayload {
  const name = isObject(document) && typeof document.name === 'string' ? document.name : '';
  return { typ: 'toolpin-pin', name, content: pinContentDigest(document) };
}

/** Signs a payload: a compact JWS (EdDSA) by a reviewer's private key (`toolpin approve --sign`). */
export type PinSigner = (payload: PinSignaturePayload) => Promise<string>;

/** The RFC 7638 thumbprint (base64url SHA-256) of an Ed25519 public JWK: the key's `kid`. */
export function jwkThumbprint(jwk: { readonly crv?: unknown; readonly x?: unknown }): string {
  const members = JSON.stringify({ crv: jwk.crv, kty: 'OKP', x: jwk.x });
  return createHash('sha256').update(members, 'utf8').digest('base64url');
}

/**
 * Reads a public key file: an Ed25519 JWK, as `toolpin key --new` writes it, or an Ed25519 public
 * key in PEM (`-----BEGIN PUBLIC KEY-----`, as openssl writes it). Throws an Error saying why.
 */
export function readTrustedKey(text: string, file: string): TrustedKey {
  if (text.trimStart().startsWith('-----BEGIN')) return readPemKey(text, file);
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${file}: not a JSON Web Key`);
  }
  if (!isObject(jwk) || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string')
    throw new Error(`${file}: expected an Ed25519 public key (a JWK with kty OKP, crv Ed25519, x)`);
  const { d: _private, ...publicJwk } = jwk;
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: publicJwk.x as string },
    format: 'jwk',
  });
  return { kid: jwkThumbprint(publicJwk), key, file };
}

// A PEM public key (or a private one, whose public half is taken): its kid is the thumbprint of its JWK.
function readPemKey(text: string, file: string): TrustedKey {
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch {
    throw new Error(`${file}: not a PEM public key`);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(
      `${file}: expected an Ed25519 public key (this PEM holds ${key.asymmetricKeyType ?? 'another'} key)`,
    );
  return { kid: jwkThumbprint(key.export({ format: 'jwk' })), key, file };
}

/** Why a compact JWS does not verify: its form, its key, or its signature. */
export type JwsProblem =
  | { readonly reason: 'malformed' }
  | { readonly reason: 'untrusted_key'; readonly kid: unknown }
  | { readonly reason: 'bad_signature'; readonly kid: string };

/** A compact JWS that verified: its signer's key id, protected header and payload (parsed). */
export interface VerifiedJws {
  readonly kid: string;
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown> | undefined;
}

/**
 * Verifies a compact JWS (EdDSA) against the trusted keys, by its header's `kid`. With `detached`
 * (RFC 7515 appendix F), the payload is those bytes: the JWS's own payload part must be empty or
 * their base64url form. Returns the verified JWS or why not; never throws.
 */
export function verifyCompactJws(
  jws: string,
  keys: readonly TrustedKey[],
  detached?: string,
): VerifiedJws | JwsProblem {
  const parts = jws.split('.');
  const [head = '', part = '', sig = ''] = parts;
  const body = detached === undefined ? part : Buffer.from(detached, 'utf8').toString('base64url');
  const header = decodeJson(head);
  if (parts.length !== 3 || header === undefined || header.alg !== 'EdDSA') return { reason: 'malformed' };
  // No extension is understood here (RFC 7515 4.1.11: a `crit` one must then be refused), and
  // `b64` (RFC 7797) would change what the signature covers.
  if (Object.hasOwn(header, 'crit') || Object.hasOwn(header, 'b64')) return { reason: 'malformed' };
  if (detached === undefined ? decodeJson(part) === undefined : part !== '' && part !== body)
    return { reason: 'malformed' };
  const trusted = keys.find((candidate) => candidate.kid === header.kid);
  if (trusted === undefined) return { reason: 'untrusted_key', kid: header.kid ?? null };
  if (!verify(null, Buffer.from(`${head}.${body}`, 'ascii'), trusted.key, Buffer.from(sig, 'base64url')))
    return { reason: 'bad_signature', kid: trusted.kid };
  return { kid: trusted.kid, header, payload: decodeJson(body) };
}

function signatureError(file: string, expected: string, data: Record<string, unknown> = {}): GatewayError {
  return new GatewayError('GW_PIN_SIGNATURE', `Pin file ${file}: signature: expected ${expected}`, {
    ...data,
    file,
    field: 'signature',
    expected,
  });
}

function decodeJson(part: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a pin document's `signature` against the trusted keys: a compact JWS, EdDSA, whose `kid`
 * is a trusted key's, whose signature verifies, and whose payload names this server and the
 * digest of this content. Returns the signer's kid; throws GatewayError GW_PIN_SIGNATURE.
 */
export function verifyPinSignature(document: unknown, keys: readonly TrustedKey[], file: string): string {
  const signature = isObject(document) ? document.signature : undefined;
  if (typeof signature !== 'string')
    throw signatureError(file, 'a signature by a trusted key (the pin is not signed)');
  const checked = verifyCompactJws(signature, keys);
  if ('reason' in checked) {
    if (checked.reason === 'malformed') throw signatureError(file, 'a compact JWS signed with EdDSA');
    if (checked.reason === 'untrusted_key')
      throw signatureError(file, 'a signature by a trusted key', {
        kid: checked.kid,
        reason: 'untrusted_key',
      });
    throw signatureError(file, 'a signature that verifies', { kid: checked.kid, reason: 'bad_signature' });
  }
  const { payload = {}, kid } = checked;
  const content = pinContentDigest(document);
  const name = isObject(document) ? document.name : undefined;
  if (payload.typ !== 'toolpin-pin' || payload.content !== content || payload.name !== name)
    throw signatureError(
      file,
      `a signature of this content (${content}): the pin changed since it was signed`,
      { kid, reason: 'content_changed' },
    );
  return kid;
}

/** The text of a pin file with `signature` set to `jws` (YAML keeps comments and order), or removed when undefined. */
export function setPinSignature(text: string, format: 'yaml' | 'json', jws: string | undefined): string {
  if (format === 'json') {
    const document = JSON.parse(text) as Record<string, unknown>;
    if (jws === undefined && !Object.hasOwn(document, 'signature')) return text;
    delete document.signature;
    return JSON.stringify(jws === undefined ? document : { ...document, signature: jws }, null, 2) + '\n';
  }
  const doc = parseDocument(text, { version: '1.2', merge: false, uniqueKeys: true });
  if (doc.errors.length > 0) throw doc.errors[0];
  if (!isMap(doc.contents) || (jws === undefined && !doc.has('signature'))) return text;
  if (jws === undefined) doc.delete('signature');
  else doc.set('signature', jws);
  return doc.toString({ lineWidth: 0 });
}
