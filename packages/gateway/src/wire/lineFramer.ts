const NEWLINE = 0x0a;

/**
 * Newline-delimited framing (MCP's stdio transport), the one line reader of both stdio sides: a
 * child's stdout (`transports/stdioChildTransport.ts`) and `wrap`'s stdin
 * (`ingress/stdioFrontTransport.ts`). Only `\n` ends a line (a `\r` before it, or a lone `\r`, is
 * the line's: JSON reads it as whitespace between tokens); a line may arrive in any number of
 * chunks and is joined with one copy. A line longer than `maxBytes` is never buffered whole: its
 * bytes are discarded up to its newline and it is reported once, as `undefined`, so the reader
 * decides whether to go on. What follows the last newline waits for the next chunk (a last line
 * without its newline is never handed over).
 */
export class LineFramer {
  readonly #maxBytes: number;
  #partial: Buffer[] = [];
  #partialBytes = 0;
  /** Inside a line already reported too long: its bytes are dropped until its newline. */
  #skipping = false;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /**
   * Hands each line the chunk completes to `onLine` (its bytes without the `\n`, or `undefined`
   * for a line over the bound), in order, while `onLine` returns true.
   */
  push(chunk: Buffer, onLine: (line: Buffer | undefined) => boolean): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const line = this.#complete(chunk.subarray(start, end));
      start = end + 1;
      if (line === null) continue;
      if (!onLine(line)) return;
    }
    if (start < chunk.length && this.#keep(chunk.subarray(start))) onLine(undefined);
  }

  /** Forgets the line being received. */
  clear(): void {
    this.#partial = [];
    this.#partialBytes = 0;
    this.#skipping = false;
  }

  /** The whole line `tail` ends; `undefined` when it is over the bound; null when it was reported already. */
  #complete(tail: Buffer): Buffer | undefined | null {
    if (this.#skipping) {
      this.#skipping = false;
      return null;
    }
    const size = this.#partialBytes + tail.length;
    if (size > this.#maxBytes) {
      this.clear();
      return undefined;
    }
    if (this.#partialBytes === 0) return tail;
    this.#partial.push(tail);
    const line = Buffer.concat(this.#partial, size);
    this.clear();
    return line;
  }

  /** Keeps the start of a line; true when that passes the bound (then reported, and skipped to its end). */
  #keep(bytes: Buffer): boolean {
    if (this.#skipping) return false;
    this.#partialBytes += bytes.length;
    if (this.#partialBytes <= this.#maxBytes) {
      this.#partial.push(bytes);
      return false;
    }
    this.#partial = [];
    this.#partialBytes = 0;
    this.#skipping = true;
    return true;
  }
}
