/**
 * How many bytes at the end of `text` (after `from`) could begin `needle`: they wait for the next
 * chunk. Only such a tail is held, so an answer that ends elsewhere (an SSE event's blank line) is
 * passed on at once.
 */
function heldTail(text: Buffer, needle: Buffer, from: number): number {
  const first = needle[0] as number;
  const start = Math.max(from, text.length - needle.length + 1);
  for (let at = text.indexOf(first, start); at >= 0; at = text.indexOf(first, at + 1))
    if (text.subarray(at).equals(needle.subarray(0, text.length - at))) return text.length - at;
  return 0;
}

/**
 * A byte stream with every occurrence of `secret` replaced by `replacement`, across chunk
 * boundaries (a chunk's tail that could begin the secret waits for the next chunk). For a secret
 * the gateway holds that an answer must never carry back (the client mode's bearer).
 */
export function redactBytes(secret: string, replacement: string): TransformStream<Uint8Array, Uint8Array> {
  if (secret === '') return new TransformStream();
  const needle = Buffer.from(secret, 'utf8');
  const substitute = Buffer.from(replacement, 'utf8');
  let held = Buffer.alloc(0);
  /** `text` redacted, but for a tail that could begin the secret (held; none at the end). */
  const release = (text: Buffer, end: boolean): Buffer => {
    const parts: Buffer[] = [];
    let from = 0;
    for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, from)) {
      parts.push(text.subarray(from, at), substitute);
      from = at + needle.length;
    }
    const cut = text.length - (end ? 0 : heldTail(text, needle, from));
    parts.push(text.subarray(from, cut));
    held = Buffer.from(text.subarray(cut));
    return Buffer.concat(parts);
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      const out = release(Buffer.concat([held, chunk]), false);
      if (out.length > 0) controller.enqueue(new Uint8Array(out));
    },
    flush(controller) {
      const out = release(held, true);
      if (out.length > 0) controller.enqueue(new Uint8Array(out));
    },
  });
}
