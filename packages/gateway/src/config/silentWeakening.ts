import { driftPolicyOf } from './driftPolicy.js';
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
const MODE_RANKS = ['monitor', 'enforce'];
const DRIFT_RANKS = ['flag', 'filter', 'block-server'];
const OUTPUT_RANKS = ['flag', 'block'];

function describe(onDrift: ServerConfig['onDrift']): string {
  return typeof onDrift === 'string' ? onDrift : `{ high: ${onDrift.high}, low: ${onDrift.low} }`;
}

// onDrift per severity: the default weakens the pin in force when either severity ranks lower.
function driftWeakened(inForce: ServerConfig, next: ServerConfig): boolean {
  const before = driftPolicyOf(inForce.onDrift);
  const after = driftPolicyOf(next.onDrift);
  return (['high', 'low'] as const).some(
    (severity) => DRIFT_RANKS.indexOf(after[severity]) < DRIFT_RANKS.indexOf(before[severity]),
  );
}

function has(document: unknown, field: string): boolean {
  return typeof document === 'object' && document !== null && Object.hasOwn(document, field);
}

/**
 * The first policy field that a reloaded pin file does not set and whose default would weaken the
 * pin in force: `mode`, `onDrift` or `onBadOutput` defaulted below the value in force, or `alerts` left out while
 * the pin in force sends this server's events to webhooks of its own, or `auth` left out while the
 * route is a resource server (it would admit requests without a token). A file written half way
 * (cut off before such a field) is exactly this; a weaker policy must be written out explicitly.
 * `document` is the parsed file before defaults; `next` what it parses to.
 */
export function findSilentWeakening(
  inForce: ServerConfig,
  document: unknown,
  next: ServerConfig,
): SilentWeakening | undefined {
  if (!has(document, 'mode') && MODE_RANKS.indexOf(next.mode) < MODE_RANKS.indexOf(inForce.mode))
    return { field: 'mode', inForce: inForce.mode, defaulted: next.mode };
  if (!has(document, 'onDrift') && driftWeakened(inForce, next))
    return { field: 'onDrift', inForce: describe(inForce.onDrift), defaulted: describe(next.onDrift) };
  // A config built without the optional onBadOutput has its default.
  const badOutputBefore = inForce.onBadOutput ?? 'flag';
  const badOutputAfter = next.onBadOutput ?? 'flag';
  if (
    !has(document, 'onBadOutput') &&
    OUTPUT_RANKS.indexOf(badOutputAfter) < OUTPUT_RANKS.indexOf(badOutputBefore)
  )
    return { field: 'onBadOutput', inForce: badOutputBefore, defaulted: badOutputAfter };
  // A resource-server route left without its auth block would admit requests without a token.
  if (!has(document, 'auth') && inForce.auth?.mode === 'resource-server' && next.auth === undefined)
    return { field: 'auth', inForce: 'resource-server', defaulted: 'transparent' };
  const webhooks = inForce.alerts?.webhooks.length ?? 0;
  if (!has(document, 'alerts') && webhooks > 0)
    return { field: 'alerts', inForce: `${webhooks} webhook(s)`, defaulted: 'none' };
  return undefined;
}
