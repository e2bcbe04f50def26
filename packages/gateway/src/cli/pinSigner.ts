import { readFile } from 'node:fs/promises';
import { CompactSign, exportJWK, generateKeyPair, importJWK } from 'jose';
import { jwkThumbprint, PIN_SIGNATURE_TYPE, type PinSigner } from '../config/pinSignature.js';
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

/**
 * The signer of `approve --sign <file>`: a private Ed25519 JWK (`toolpin key --new`) that signs
 * a pin's payload as a compact JWS (jose), its header naming the key's thumbprint as `kid`.
 * Throws CliInputError when the file is not such a key.
 */
export async function loadPinSigner(file: string): Promise<{ sign: PinSigner; kid: string }> {
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new CliInputError(
      `--sign ${file}: cannot read a JSON Web Key (${(error as NodeJS.ErrnoException).code ?? 'not JSON'})`,
    );
  }
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string' || typeof jwk.x !== 'string')
    throw new CliInputError(`--sign ${file}: expected an Ed25519 private key (toolpin key --new writes one)`);
  const key = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d }, 'EdDSA');
  const kid = jwkThumbprint(jwk);
  const sign: PinSigner = (payload) =>
    new CompactSign(
      new TextEncoder().encode(JSON.stringify({ ...payload, iat: Math.floor(Date.now() / 1000) })),
    )
      .setProtectedHeader({ alg: 'EdDSA', kid, typ: PIN_SIGNATURE_TYPE })
      .sign(key);
  return { sign, kid };
}
