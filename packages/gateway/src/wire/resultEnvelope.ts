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
