/**
 * A session key speaks for a principal when it begins `as:<name>` and a newline (the fronts build
 * it so: ingress/sessionKey.ts); each principal's catalogs are then its own in every checkpoint.
 */
const PREFIX = 'as:';

/** The key `key` under `principal` (none: unchanged). */
export function keyForPrincipal(principal: string | undefined, key: string): string {
  return principal === undefined ? key : `${PREFIX}${principal}\n${key}`;
}

/** The principal a session key speaks for; undefined for a key built without one. */
export function principalOfKey(key: string): string | undefined {
  if (!key.startsWith(PREFIX)) return undefined;
  const end = key.indexOf('\n');
  return end < 0 ? undefined : key.slice(PREFIX.length, end);
}
