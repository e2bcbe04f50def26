import { canonicalizeJson } from './canonicalizeJson.js';
import { INSTRUCTIONS_PROFILE } from './profiles.js';
import { sha256Digest } from './sha256.js';

/**
 * The digest of a server's `instructions`: `sha256:` + hex over JCS
 * `{"instructions":<value>,"profile":"toolpin.mcp-server-instructions.v1"}`, or over
 * `{"profile":…}` alone when the server sends none (`undefined` or `null`), so that no
 * instructions and `""` differ. A value that is not a string is hashed as served (any change is
 * drift). Throws DigestError DIGEST_NOT_CANONICAL or DIGEST_TOO_DEEP for a value JCS cannot write.
 */
export function digestInstructions(instructions: unknown): string {
  const preimage =
    instructions === undefined || instructions === null
      ? { profile: INSTRUCTIONS_PROFILE }
      : { profile: INSTRUCTIONS_PROFILE, instructions };
  return sha256Digest(canonicalizeJson(preimage));
}
