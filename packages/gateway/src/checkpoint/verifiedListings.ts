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
  /** `input` as UTF-8: the bytes an unchanged listing arrives in again. */
  readonly inputBytes: Buffer;
  /** `output` as UTF-8, written as is to every client it answers (shared, never copied). */
  readonly outputBytes: Buffer;
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
  // The shortest result remembered, in characters and in bytes: an answer shorter than that (a
  // call's, most answers) cannot carry one, and is not looked at further.
  #shortestChars = Infinity;
  #shortestBytes = Infinity;

  /** False when an answer of `chars` characters is too short to carry any listing remembered. */
  mayCarryText(chars: number): boolean {
    return chars >= this.#shortestChars;
  }

  /** False when an answer of `bytes` bytes is too short to carry any listing remembered. */
  mayCarryBytes(bytes: number): boolean {
    return bytes >= this.#shortestBytes;
  }

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

  /**
   * The listing verified from exactly these bytes (bytes [start, end) of the slices) under exactly
   * this config, if remembered. Identical bytes are the UTF-8 of the very text verified.
   */
  findBytes(
    config: ServerConfig,
    slices: readonly Buffer[],
    start: number,
    end: number,
  ): VerifiedListing | undefined {
    for (const entry of this.#entries) {
      if (entry.config !== config || entry.inputBytes.length !== end - start) continue;
      if (sameBytes(entry.inputBytes, slices, start, end)) return this.find(config, entry.input);
    }
    return undefined;
  }

  /** Forgets every listing (a new pin is in force). */
  clear(): void {
    this.#keep([]);
  }

  #keep(entries: VerifiedListing[]): void {
    this.#entries = entries;
    this.#shortestChars = Math.min(...entries.map((entry) => entry.input.length));
    this.#shortestBytes = Math.min(...entries.map((entry) => entry.inputBytes.length));
  }

  /** Remembers a listing, forgetting the least recently used past the bounds. */
  remember(entry: VerifiedListing): void {
    // The bytes count as much again (off the heap).
    if (entry.input.length + entry.output.length > MAX_CHARS) return;
    const kept = [entry];
    let chars = entry.input.length + entry.output.length;
    for (const other of this.#entries) {
      if (other.config !== entry.config) continue;
      chars += other.input.length + other.output.length;
      if (kept.length >= MAX_ENTRIES || chars > MAX_CHARS) break;
      kept.push(other);
    }
    this.#keep(kept);
  }
}

/** True when bytes [start, end) of the slices (laid end to end) are `bytes`. */
function sameBytes(bytes: Buffer, slices: readonly Buffer[], start: number, end: number): boolean {
  let at = 0;
  let compared = 0;
  for (const slice of slices) {
    const from = Math.max(start - at, 0);
    const to = Math.min(end - at, slice.length);
    at += slice.length;
    if (to <= from) continue;
    if (bytes.compare(slice, from, to, compared, compared + (to - from)) !== 0) return false;
    compared += to - from;
  }
  return compared === bytes.length;
}
