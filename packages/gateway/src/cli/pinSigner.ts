import { readFile } from 'node:fs/promises';
import { canonicalizeJson } from '@toolpin/digest';
import { CompactSign, exportJWK, generateKeyPair, importJWK } from 'jose';
import { jwkThumbprint, PIN_SIGNATURE_TYPE, type PinSigner } from '../config/pinSignature.js';
import { MANIFEST_SIGNATURE_TYPE, type ManifestBody } from '../config/catalogManifest.js';
import { CliInputError } from './cliInputError.js';

/** A new Ed25519 key pair as JWKs, each with its `kid` (the RFC 7638 thumbprint of the public key). */
export async function newSigningKeyPair(): Promise<{ privateJwk: object; publicJwk: object; kid: string }> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = jwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  return {
    privateJwk: { ...privateJwk, kid, alg: 'EdDSA' },
    publicJwk: { ...publicJwk, kid, alg: 'EdDSA', use: 'sig' },
    kid,
  };
}

/** A private Ed25519 signing key, read from its JWK file, and its kid (the thumbprint of its public key). */
export interface SigningKey {
  readonly key: Awaited<ReturnType<typeof importJWK>>;
  readonly kid: string;
}

/**
 * Reads a private Ed25519 JWK (`toolpin key --new`) for `flag` (`--sign`). Throws CliInputError
 * when the file is not such a key.
 */
export async function loadSigningKey(file: string, flag = '--sign'): Promise<SigningKey> {
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new CliInputError(
      `${flag} ${file}: cannot read a JSON Web Key (${(error as NodeJS.ErrnoException).code ?? 'not JSON'})`,
    );
  }
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string' || typeof jwk.x !== 'string')
    throw new CliInputError(
      `${flag} ${file}: expected an Ed25519 private key (toolpin key --new writes one)`,
    );
  const key = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d }, 'EdDSA');
  return { key, kid: jwkThumbprint(jwk) };
}

/**
 * The signer of `approve --sign <file>`: a private Ed25519 JWK (`toolpin key --new`) that signs
 * a pin's payload as a compact JWS (jose), its header naming the key's thumbprint as `kid`.
 * Throws CliInputError when the file is not such a key.
 */
export async function loadPinSigner(file: string): Promise<{ sign: PinSigner; kid: string }> {
  const { key, kid } = await loadSigningKey(file);
  const sign: PinSigner = (payload) =>
    new CompactSign(
      new TextEncoder().encode(JSON.stringify({ ...payload, iat: Math.floor(Date.now() / 1000) })),
    )
      .setProtectedHeader({ alg: 'EdDSA', kid, typ: PIN_SIGNATURE_TYPE })
      .sign(key);
  return { sign, kid };
}

/**
 * Signs a catalog manifest's statement (docs/manifests.md): a JWS (jose, EdDSA) over its RFC 8785
 * form, detached (RFC 7515 appendix F: `header..signature`), typed as a manifest signature.
 */
export async function signManifest(body: ManifestBody, signer: SigningKey): Promise<string> {
  const jws = await new CompactSign(new TextEncoder().encode(canonicalizeJson(body)))
    .setProtectedHeader({ alg: 'EdDSA', kid: signer.kid, typ: MANIFEST_SIGNATURE_TYPE })
    .sign(signer.key);
  const [head = '', , signature = ''] = jws.split('.');
  return `${head}..${signature}`;
}
