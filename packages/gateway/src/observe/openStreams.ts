import type { OpenStream, StreamKind } from './telemetry.js';

/** The SSE streams the gateway is relaying right now, so metrics can count them and shutdown can end them. */
export class OpenStreams {
  readonly #streams = new Set<OpenStream>();

  /** Registers a stream; the returned function unregisters it (idempotent). */
  add(stream: OpenStream): () => void {
    this.#streams.add(stream);
    return () => {
      this.#streams.delete(stream);
    };
  }

  /** How many streams are open, per server. */
  countByServer(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const stream of this.#streams) counts.set(stream.server, (counts.get(stream.server) ?? 0) + 1);
    return counts;
  }

  /** How many streams are open in total. */
  get size(): number {
    return this.#streams.size;
  }

  /** Ends every stream of a kind (every stream without a kind); returns how many were ended. */
  end(kind?: StreamKind): number {
    let ended = 0;
    for (const stream of [...this.#streams]) {
      if (kind !== undefined && stream.kind !== kind) continue;
      this.#streams.delete(stream);
      stream.end();
      ended += 1;
    }
    return ended;
  }
}
