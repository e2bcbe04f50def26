import { findingIdentity, type DriftFinding } from '../policy/driftFinding.js';
import type { AlertEvent } from './alerts.js';

// One server's acknowledgements are bounded like its drift findings: a reviewer acknowledges what
// the page shows, and the page shows at most this many.
const MAX_ACKNOWLEDGED_PER_SERVER = 1000;

type FindingId = Pick<DriftFinding, 'kind' | 'key' | 'observed' | 'problem'>;

/**
 * Drift a reviewer chose to keep blocked ("keep blocked" on the review page): the definition stays
 * refused as before, and a `catalog.drift` event made only of acknowledged findings no longer goes
 * to the webhooks. An acknowledgement names the observed digest, so a definition that changes
 * again alerts again.
 */
export class DriftAcknowledgements {
  readonly #acknowledged = new Map<string, Set<string>>();

  /** Acknowledges one finding of a server; false when the server's table is full. */
  acknowledge(server: string, finding: FindingId): boolean {
    let table = this.#acknowledged.get(server);
    if (table === undefined) {
      table = new Set();
      this.#acknowledged.set(server, table);
    }
    const identity = findingIdentity(finding);
    if (!table.has(identity) && table.size >= MAX_ACKNOWLEDGED_PER_SERVER) return false;
    table.add(identity);
    return true;
  }

  /** True when this finding (kind, key, observed digest) was acknowledged. */
  isAcknowledged(server: string, finding: FindingId): boolean {
    return this.#acknowledged.get(server)?.has(findingIdentity(finding)) === true;
  }

  /** True for a `catalog.drift` event whose every finding was acknowledged (and none omitted). */
  covers(event: AlertEvent): boolean {
    if (event.event !== 'catalog.drift' || event.drift.length === 0) return false;
    if ((event.findingsOmitted ?? 0) > 0) return false;
    return event.drift.every((finding) => this.isAcknowledged(event.server, finding));
  }
}
