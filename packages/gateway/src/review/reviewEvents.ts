import type { Response } from 'express';
import { encodeSseEvent } from '../wire/sseEncode.js';

// A few reviewers' tabs; one more is refused (503) rather than holding an unbounded set of streams.
const MAX_STREAMS = 16;
// Bursts of alerts (every session lists a drifted server) cost one render per stream per interval.
const COALESCE_MS = 100;

interface Stream {
  readonly res: Response;
  readonly render: () => string;
}

/**
 * The review page's live updates: `GET /ui/events` streams, each sent the page's servers section
 * (rendered for its own session) as one `servers` event whenever the status changes.
 */
export class ReviewEvents {
  readonly #streams = new Set<Stream>();
  #timer: NodeJS.Timeout | undefined;

  /** Opens a stream on `res` (false: too many streams). `render` is called at each update. */
  open(res: Response, render: () => string): boolean {
    if (this.#streams.size >= MAX_STREAMS) return false;
    const stream = { res, render };
    this.#streams.add(stream);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    res.write(': toolpin review\n\n');
    res.on('close', () => this.#streams.delete(stream));
    return true;
  }

  /** Something changed: every stream gets the new section soon (bursts coalesced). */
  changed(): void {
    if (this.#timer !== undefined || this.#streams.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      for (const stream of this.#streams)
        stream.res.write(encodeSseEvent({ event: 'servers', data: stream.render() }));
    }, COALESCE_MS);
    this.#timer.unref();
  }

  /** Ends every stream (shutdown). */
  close(): void {
    clearTimeout(this.#timer);
    for (const stream of this.#streams) stream.res.end();
    this.#streams.clear();
  }
}
