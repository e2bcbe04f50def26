import { findingIdentity, type DriftFinding } from '../policy/driftFinding.js';
import type { AlertEvent } from './alerts.js';

/** How many calls of one item the gateway allowed (flagged ones included) and refused. */
export interface ItemCalls {
  readonly allowed: number;
  readonly refused: number;
}

// Names come from clients (a refused call may name anything): past this many per server, a new
// name is not counted, so the tables stay bounded whatever clients send.
const MAX_NAMES_PER_SERVER = 1000;

function bounded<V>(map: Map<string, V>, key: string, create: () => V): V | undefined {
  const found = map.get(key);
  if (found !== undefined) return found;
  if (map.size >= MAX_NAMES_PER_SERVER) return undefined;
  const value = create();
  map.set(key, value);
  return value;
}

/**
 * What the review page shows of each item beside its state (docs/review-ui.md): the calls allowed
 * and refused per tool or prompt name, and when each drifted definition was first seen. Fed by
 * alert events and by the allowed-call hook; bounded per server.
 */
export class ItemActivity {
  readonly #calls = new Map<string, Map<string, { allowed: number; refused: number }>>();
  readonly #firstSeen = new Map<string, Map<string, string>>();

  #of<V>(tables: Map<string, Map<string, V>>, server: string): Map<string, V> {
    let table = tables.get(server);
    if (table === undefined) {
      table = new Map();
      tables.set(server, table);
    }
    return table;
  }

  /** A call the policy allowed without finding. */
  recordAllowed(server: string, name: string): void {
    const counts = bounded(this.#of(this.#calls, server), name, () => ({ allowed: 0, refused: 0 }));
    if (counts !== undefined) counts.allowed++;
  }

  /** Alert sink: refused and flagged calls, and the first sighting of each drifted definition. */
  recordAlert(event: AlertEvent): void {
    if (event.event === 'call.blocked' || event.event === 'call.flagged') {
      const name = event.decision.tool ?? event.decision.prompt;
      if (name === undefined || name === null) return;
      const counts = bounded(this.#of(this.#calls, event.server), name, () => ({ allowed: 0, refused: 0 }));
      if (counts === undefined) return;
      if (event.event === 'call.blocked') counts.refused++;
      else counts.allowed++;
      return;
    }
    if (event.event !== 'catalog.drift') return;
    const table = this.#of(this.#firstSeen, event.server);
    const at = new Date().toISOString();
    for (const finding of event.drift) bounded(table, findingIdentity(finding), () => at);
  }

  /** The calls of one item by name (zero when none were seen). */
  callsOf(server: string, name: string): ItemCalls {
    return this.#calls.get(server)?.get(name) ?? { allowed: 0, refused: 0 };
  }

  /** When this drifted definition (kind, key, observed digest) was first seen, if it was. */
  firstSeen(
    server: string,
    finding: Pick<DriftFinding, 'kind' | 'key' | 'observed' | 'problem'>,
  ): string | undefined {
    return this.#firstSeen.get(server)?.get(findingIdentity(finding));
  }
}
