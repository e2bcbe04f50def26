import { LiveList, type ListMember } from '../state/liveList.js';
import type { OpenStream, StreamKind } from './telemetry.js';

/** One registered stream, linked into the registry's list. */
interface Registered extends ListMember<Registered> {
  readonly stream: OpenStream;
}

/**
 * The SSE streams the gateway is relaying right now, so metrics can count them and shutdown can end
 * them. A stream opens and closes with nearly every SSE answer: the registry is a {@link LiveList}
 * (see there why not a Set).
 */
export class OpenStreams {
  readonly #streams = new LiveList<Registered>();

  /** Registers a stream; the returned function unregisters it (idempotent). */
  add(stream: OpenStream): () => void {
    const registered: Registered = { listPrev: null, listNext: null, listed: false, stream };
    this.#streams.add(registered);
    return () => this.#streams.remove(registered);
  }

  /** How many streams are open, per server. */
  countByServer(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { stream } of this.#streams.toArray())
      counts.set(stream.server, (counts.get(stream.server) ?? 0) + 1);
    return counts;
  }

  /** How many streams are open in total. */
  get size(): number {
    return this.#streams.size;
  }

  /** Ends every stream of a kind (every stream without a kind); returns how many were ended. */
  end(kind?: StreamKind): number {
    const ending = this.#streams.filter(
      (registered) => kind === undefined || registered.stream.kind === kind,
    );
    for (const registered of ending) {
      this.#streams.remove(registered);
      registered.stream.end();
    }
    return ending.length;
  }
}
