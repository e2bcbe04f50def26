import { redactUrl } from '../wire/redactUrl.js';
import type { PinFileInput } from './types.js';

/** The mode of a pin file readable by others: one without a secret in its upstream. */
const SHARED_MODE = 0o644;
/** The mode of a pin file holding a secret: readable by its owner only, whatever its folder's mode. */
const PRIVATE_MODE = 0o600;

/**
 * The mode a new pin file is created with: owner-only (0600) when its upstream holds a secret, a
 * stdio `env` (API keys copied from a client config), HTTP `headers`, or a URL carrying credentials
 * (userinfo, or a parameter redactUrl redacts: `?api_key=`, `?token=`, …); 0644 otherwise. An
 * existing pin file keeps its mode (writeFileAtomic).
 */
export function pinFileMode(upstream: PinFileInput['upstream']): number {
  if ('url' in upstream) {
    const headers = Object.keys(upstream.headers ?? {}).length > 0;
    // redactUrl returns a URL it has nothing to hide in exactly as written.
    return headers || redactUrl(upstream.url) !== upstream.url ? PRIVATE_MODE : SHARED_MODE;
  }
  return Object.keys(upstream.env ?? {}).length > 0 ? PRIVATE_MODE : SHARED_MODE;
}
