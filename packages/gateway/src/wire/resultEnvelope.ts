import type { JsonRpcId } from './jsonRpc.js';

/**
 * A JSON-RPC success response recognized in its text, in one of the two compact key orders
 * servers serialize (`{"result":R,"jsonrpc":"2.0","id":I}` as the TypeScript SDK does,
 * `{"jsonrpc":"2.0","id":I,"result":R}` as most others do), with the `result` text located but
 * not parsed. Nothing here says R is valid JSON: whoever uses `resultText` must have parsed it
 * (or found it equal to a text that parsed) before trusting the shape.
 */
export interface ResultEnvelope {
  readonly id: JsonRpcId;
  /** The text of the `result` value. */
  readonly resultText: string;
  /** Puts another result text in the same envelope: the same bytes JSON.stringify would give. */
  wrap(resultText: string): string;
}

const RESULT_FIRST = '{"result":';
const RESULT_FIRST_TAIL = ',"jsonrpc":"2.0","id":';
const ID_FIRST = '{"jsonrpc":"2.0","id":';
const ID_FIRST_TAIL = ',"result":';
// Ids whose text is already what JSON.stringify writes for them: integers that round-trip
// exactly, and strings that need no escape. Any other id takes the parsing path.
const CANONICAL_ID = /^(?:0|-?[1-9][0-9]{0,14}|"[A-Za-z0-9_.:-]{0,128}")$/;

function parseId(text: string): JsonRpcId | undefined {
  if (!CANONICAL_ID.test(text)) return undefined;
  return text.charCodeAt(0) === 34 /* " */ ? text.slice(1, -1) : Number(text);
}

/**
 * Locates the result of a compact success response without parsing it. When R is a single JSON
 * value, the text is exactly the object {result: R, jsonrpc: "2.0", id} (in its key order), and
 * `wrap(R')` is what JSON.stringify gives for that object with R' as its result.
 */
export function matchResultEnvelope(text: string): ResultEnvelope | undefined {
  if (text.charCodeAt(text.length - 1) !== 125 /* } */) return undefined;
  if (text.startsWith(RESULT_FIRST)) {
    const tail = text.lastIndexOf(RESULT_FIRST_TAIL);
    if (tail < RESULT_FIRST.length) return undefined;
    const idText = text.slice(tail + RESULT_FIRST_TAIL.length, -1);
    const id = parseId(idText);
    if (id === undefined) return undefined;
    const suffix = text.slice(tail);
    return {
      id,
      resultText: text.slice(RESULT_FIRST.length, tail),
      wrap: (result) => RESULT_FIRST + result + suffix,
    };
  }
  if (text.startsWith(ID_FIRST)) {
    const head = text.indexOf(ID_FIRST_TAIL, ID_FIRST.length);
    if (head < 0) return undefined;
    const id = parseId(text.slice(ID_FIRST.length, head));
    if (id === undefined) return undefined;
    const prefix = text.slice(0, head + ID_FIRST_TAIL.length);
    return { id, resultText: text.slice(prefix.length, -1), wrap: (result) => prefix + result + '}' };
  }
  return undefined;
}

/** A compact success response located in bytes (see {@link matchResultEnvelope}): R is bytes [resultStart, resultEnd). */
export interface ResultEnvelopeBytes {
  readonly id: JsonRpcId;
  readonly resultStart: number;
  readonly resultEnd: number;
  /** The envelope's text before R and after it: `prefix + R' + suffix` is `wrap(R')`. */
  readonly prefix: string;
  readonly suffix: string;
}

// The envelope around R fits in this many bytes at either end (a canonical id has at most 130).
const ENVELOPE_BYTES = 192;

/** The first or last `count` bytes of bytes spread over slices (only those bytes copied, when they span slices). */
function edge(slices: readonly Buffer[], length: number, count: number, last: boolean): string {
  const n = Math.min(count, length);
  const one = slices[last ? slices.length - 1 : 0];
  if (one !== undefined && one.length >= n)
    return (last ? one.subarray(one.length - n) : one.subarray(0, n)).toString('latin1');
  const pieces: Buffer[] = [];
  let gathered = 0;
  for (let i = 0; i < slices.length && gathered < n; i++) {
    const slice = slices[last ? slices.length - 1 - i : i] as Buffer;
    const take = Math.min(slice.length, n - gathered);
    pieces.push(last ? slice.subarray(slice.length - take) : slice.subarray(0, take));
    gathered += take;
  }
  if (last) pieces.reverse();
  return Buffer.concat(pieces, gathered).toString('latin1');
}

/**
 * {@link matchResultEnvelope} on the bytes of a message (the slices it arrived in), reading only its
 * two ends: where R lies, and the envelope around it, when the bytes are a compact success response
 * with a canonical id. R is not read here: whoever uses it compares it with bytes it verified.
 */
export function matchResultEnvelopeBytes(
  slices: readonly Buffer[],
  length: number,
): ResultEnvelopeBytes | undefined {
  if (length < RESULT_FIRST.length + 2) return undefined;
  const head = edge(slices, length, ENVELOPE_BYTES, false);
  const tail = edge(slices, length, ENVELOPE_BYTES, true);
  if (tail.charCodeAt(tail.length - 1) !== 125 /* } */) return undefined;
  if (head.startsWith(RESULT_FIRST)) {
    const at = tail.lastIndexOf(RESULT_FIRST_TAIL);
    const resultEnd = length - (tail.length - at);
    if (at < 0 || resultEnd < RESULT_FIRST.length) return undefined;
    const id = parseId(tail.slice(at + RESULT_FIRST_TAIL.length, -1));
    if (id === undefined) return undefined;
    return { id, resultStart: RESULT_FIRST.length, resultEnd, prefix: RESULT_FIRST, suffix: tail.slice(at) };
  }
  if (head.startsWith(ID_FIRST)) {
    const at = head.indexOf(ID_FIRST_TAIL, ID_FIRST.length);
    if (at < 0) return undefined;
    const id = parseId(head.slice(ID_FIRST.length, at));
    const resultStart = at + ID_FIRST_TAIL.length;
    if (id === undefined || resultStart > length - 1) return undefined;
    return { id, resultStart, resultEnd: length - 1, prefix: head.slice(0, resultStart), suffix: '}' };
  }
  return undefined;
}
