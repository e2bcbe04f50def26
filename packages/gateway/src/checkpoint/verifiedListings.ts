import type { ServerConfig } from '../config/index.js';
import type { PageInspection } from '../policy/inspectToolsPage.js';

/** One tools/list result text the checkpoint verified in full, and everything that verification produced. */
export interface VerifiedListing {
  /** The pin in force when it was verified: a listing is reused only under the very same one. */
  readonly config: ServerConfig;
  /** The result text as the upstream sent it; JSON.parse accepted it (a single JSON value). */
  readonly input: string;
  readonly inspection: PageInspection;
  /** The page had no nextCursor. */
  readonly last: boolean;
  /** JSON.stringify of the verified result the client receives. */
  readonly output: string;
  /** The verified result itself (what `output` serializes). */
  readonly result: unknown;
  /** The catalog digest of a listing that is a whole verified catalog on one page, once folded. */
  catalogDigest?: string;
}

// A server serves one catalog to most of its sessions; a few entries cover pages and the odd
// per-user variant without holding many large texts.
const MAX_ENTRIES = 4;
const MAX_CHARS = 16 * 1024 * 1024;

/**
 * The last few tools/list result texts one server's checkpoint verified. Parsing, digesting and
 * re-serializing a 500-tool listing costs milliseconds; finding that the same text arrived again
 * costs a length check and one string comparison, and equal text parses to an equal value, so
 * the verification (and the bytes the client receives) would be the same.
 */
export class VerifiedListings {
  #entries: VerifiedListing[] = [];

  /** The listing verified from exactly this text under exactly this config, if remembered. */
  find(config: ServerConfig, input: string): VerifiedListing | undefined {
    for (let i = 0; i < this.#entries.length; i++) {
      const entry = this.#entries[i] as VerifiedListing;
      if (entry.input.length !== input.length || entry.config !== config || entry.input !== input) continue;
      if (i > 0) this.#entries = [entry, ...this.#entries.slice(0, i), ...this.#entries.slice(i + 1)];
      return entry;
    }
    return undefined;
  }

  /** Remembers a listing, forgetting the least recently used past the bounds. */
  remember(entry: VerifiedListing): void {
    if (entry.input.length + entry.output.length > MAX_CHARS) return;
    const kept = [entry];
    let chars = entry.input.length + entry.output.length;
    for (const other of this.#entries) {
      if (other.config !== entry.config) continue;
      chars += other.input.length + other.output.length;
      if (kept.length >= MAX_ENTRIES || chars > MAX_CHARS) break;
      kept.push(other);
    }
    this.#entries = kept;
  }
}
