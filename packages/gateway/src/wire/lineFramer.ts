const NEWLINE = 0x0a;
/** The first buffer of a line that spans chunks (smaller when the bound is). */
const MIN_CAPACITY = 4096;

/**
 * Newline-delimited framing (MCP's stdio transport), the one line reader of both stdio sides: a
 * child's stdout (`transports/stdioChildTransport.ts`) and `wrap`'s stdin
 * (`ingress/stdioFrontTransport.ts`). Only `\n` ends a line (a `\r` before it, or a lone `\r`, is
 * the line's: JSON reads it as whitespace between tokens); a line may arrive in any number of
 * chunks. A line whole in its chunk is handed over as a view of it; the start of one that is not is
 * copied into one buffer that doubles as it fills (no chunk is held: a line dripped a byte a chunk
 * held one Buffer object per byte, hundreds of bytes each, so the bound on bytes bounded nothing;
 * now a line costs at most twice its bytes). A line longer than `maxBytes` is never buffered whole: its
 * bytes are discarded up to its newline and it is reported once, as `undefined`, so the reader
 * decides whether to go on. What follows the last newline waits for the next chunk (a last line
 * without its newline is never handed over).
 */
export class LineFramer {
  readonly #maxBytes: number;
  /** The start of the line being received (its first `#used` bytes), a copy: never a chunk's view. */
  #buffer: Buffer | undefined;
  #used = 0;
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
    this.#buffer = undefined;
    this.#used = 0;
    this.#skipping = false;
  }

  /** The whole line `tail` ends; `undefined` when it is over the bound; null when it was reported already. */
  #complete(tail: Buffer): Buffer | undefined | null {
    if (this.#skipping) {
      this.#skipping = false;
      return null;
    }
    const size = this.#used + tail.length;
    if (size > this.#maxBytes) {
      this.clear();
      return undefined;
    }
    if (this.#used === 0) return tail;
    const line = this.#append(tail).subarray(0, size);
    this.clear();
    return line;
  }

  /** Keeps the start of a line; true when that passes the bound (then reported, and skipped to its end). */
  #keep(bytes: Buffer): boolean {
    if (this.#skipping) return false;
    if (this.#used + bytes.length <= this.#maxBytes) {
      this.#append(bytes);
      return false;
    }
    this.clear();
    this.#skipping = true;
    return true;
  }

  /** Copies `bytes` after the line's start (the caller checked the bound), doubling the buffer when full. */
  #append(bytes: Buffer): Buffer {
    const size = this.#used + bytes.length;
    let buffer = this.#buffer;
    if (buffer === undefined || size > buffer.length) {
      const capacity = Math.min(this.#maxBytes, Math.max(size, 2 * (buffer?.length ?? 0), MIN_CAPACITY));
      const grown = Buffer.allocUnsafe(capacity);
      buffer?.copy(grown, 0, 0, this.#used);
      buffer = grown;
      this.#buffer = grown;
    }
    bytes.copy(buffer, this.#used);
    this.#used = size;
    return buffer;
  }
}
