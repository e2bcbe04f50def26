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
  /** Tool name → the observation the client last saw under that name. */
  readonly tools: ReadonlyMap<string, ToolObservation>;
}
