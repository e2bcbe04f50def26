import type { DriftSeverity } from '../explain/driftSeverity.js';
import type { ToolObservation } from './toolObservation.js';

/**
 * What {@link decideCall} reads of the catalog a session was served. The session's record of it
 * (state/sessionCatalog.ts) implements this view; policy only reads it.
 */
export interface CatalogView {
  /** True when a decision can be made from what the session saw. */
  readonly usable: boolean;
  /** No observed key is pinned: another server's catalog. */
  readonly wrongSubject: boolean;
  /** Any tool of the listing differs from the pin (for onDrift: block-server). */
  readonly drifted: boolean;
  /** The severities of the listing's drift (for onDrift: block-server per severity). */
  readonly driftSeverities: ReadonlySet<DriftSeverity>;
  /** Key -> `<pinned digest> <observed digest>` of each changed tool whose drift was judged low. */
  readonly lowDrift: ReadonlyMap<string, string>;
  /** Key -> the members of each changed tool that differ from the pinned definition (for the refusal's sentence). */
  readonly changedMembers?: ReadonlyMap<string, readonly string[]>;
  /** Tool name → the observation the client last saw under that name. */
  readonly tools: ReadonlyMap<string, ToolObservation>;
}
