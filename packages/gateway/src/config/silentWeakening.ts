import type { ServerConfig } from './types.js';

/** A policy field a reloaded pin file left out, whose default is weaker than the value in force. */
export interface SilentWeakening {
  /** The pin file field, as in the file. */
  readonly field: string;
  readonly inForce: string;
  readonly defaulted: string;
}

// Each policy field with a default, its values from the weakest up. A field the file leaves out
// takes the default; on a reload that must never loosen what the pin in force enforces.
const RANKS: readonly {
  readonly field: 'mode' | 'onDrift' | 'onBadOutput';
  readonly ranks: readonly string[];
}[] = [
  { field: 'mode', ranks: ['monitor', 'enforce'] },
  { field: 'onDrift', ranks: ['filter', 'block-server'] },
  { field: 'onBadOutput', ranks: ['flag', 'block'] },
];

function has(document: unknown, field: string): boolean {
  return typeof document === 'object' && document !== null && Object.hasOwn(document, field);
}

/**
 * The first policy field that a reloaded pin file does not set and whose default would weaken the
 * pin in force: `mode`, `onDrift` or `onBadOutput` defaulted below the value in force, or `alerts` left out while
 * the pin in force sends this server's events to webhooks of its own. A file written half way
 * (cut off before such a field) is exactly this; a weaker policy must be written out explicitly.
 * `document` is the parsed file before defaults; `next` what it parses to.
 */
export function findSilentWeakening(
  inForce: ServerConfig,
  document: unknown,
  next: ServerConfig,
): SilentWeakening | undefined {
  for (const { field, ranks } of RANKS) {
    if (has(document, field)) continue;
    // A config built without the optional onBadOutput has its default.
    const was = inForce[field] ?? 'flag';
    const now = next[field] ?? 'flag';
    if (ranks.indexOf(now) < ranks.indexOf(was)) return { field, inForce: was, defaulted: now };
  }
  const webhooks = inForce.alerts?.webhooks.length ?? 0;
  if (!has(document, 'alerts') && webhooks > 0)
    return { field: 'alerts', inForce: `${webhooks} webhook(s)`, defaulted: 'none' };
  return undefined;
}
