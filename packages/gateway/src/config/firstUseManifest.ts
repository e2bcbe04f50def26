import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { GatewayError } from '../errors.js';
import { parseCatalogManifest, verifyCatalogManifest, type VerifiedManifest } from './catalogManifest.js';
import type { TrustedKey } from './pinSignature.js';

/**
 * The `firstUseManifest` of a trust-on-first-use pin (docs/manifests.md), read and verified when
 * the pin file is loaded, so that a manifest that is missing, unsigned by one of the gateway's
 * `manifestKeys`, edited, or under another profile keeps the pin file from loading (at start, or at
 * reload: the last good pin stays). Read synchronously: a pin file's parse is one step. Throws
 * GatewayError GW_MANIFEST_REFUSED.
 */
export function readFirstUseManifest(
  path: string,
  profile: string,
  pinFile: string,
  keys: readonly TrustedKey[],
): VerifiedManifest {
  const source = isAbsolute(path) ? path : resolve(dirname(pinFile), path);
  const refuse = (reason: string, expected: string): GatewayError =>
    new GatewayError('GW_MANIFEST_REFUSED', `Pin file ${pinFile}: firstUseManifest: expected ${expected}`, {
      file: pinFile,
      field: 'firstUseManifest',
      source,
      reason,
      expected,
    });
  if (keys.length === 0)
    throw refuse('untrusted_key', 'a key to verify it: the gateway file lists no manifestKeys');
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch (error) {
    throw refuse('unreadable', `a readable manifest (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const verified = verifyCatalogManifest(parseCatalogManifest(text, source), keys, source);
  if (verified.body.profile !== profile)
    throw refuse(
      'profile',
      `a manifest under the pin's profile ${profile} (it states ${verified.body.profile})`,
    );
  return verified;
}
