import { createHash } from 'node:crypto';

/**
 * What the logs call a session: a short hash, never the raw Mcp-Session-Id (which lets anyone
 * who reads it act as the session) nor the credential a 2026-07-28 observation is keyed by.
 */
export function sessionLabel(sessionKey: string): string {
  return createHash('sha256').update(sessionKey).digest('hex').slice(0, 12);
}
