import { DRIFT_MARK, EVIL_MARK, isPinnedDefinition, toolLikeObjects } from './tools.js';

function tryParse(text: string): unknown[] {
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? [value, ...(value as unknown[])] : [value];
  } catch {
    return [];
  }
}

/**
 * Every JSON value a lenient client could take from a body: the whole body as JSON, else each SSE
 * event's data (any line ending, any leading whitespace, data lines joined or one by one), and every
 * member of every array.
 */
export function lenientMessages(body: string): unknown[] {
  const whole = tryParse(body);
  if (whole.length > 0) return whole;
  const found: unknown[] = [];
  for (const block of body.split(/\r\n\r\n|\n\n|\r\r|\r\n\n|\n\r\n/)) {
    const data: string[] = [];
    for (const line of block.split(/\r\n|\r|\n/)) {
      const match = /^data:?(.*)$/.exec(line);
      if (match !== null) data.push(match[1] ?? '');
    }
    if (data.length === 0) continue;
    found.push(...tryParse(data.join('\n')));
    for (const line of data) found.push(...tryParse(line));
  }
  const seen = new Set<string>();
  return found.filter((value) => {
    const key = JSON.stringify(value);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What a client received that it must never have: unpinned definitions, and the attack's markers. */
export interface Leak {
  /** Tool definitions whose digest is not pinned. */
  readonly unpinned: object[];
  /** Markers of the drifted or unpinned tool found anywhere in the bytes. */
  readonly markers: string[];
}

/** Reads `received` (raw bytes and bodies) as leniently as any client would, and reports leaks. */
export function findLeaks(...received: readonly string[]): Leak {
  const unpinned: object[] = [];
  const markers = new Set<string>();
  for (const text of received) {
    for (const mark of [DRIFT_MARK, EVIL_MARK]) if (text.includes(mark)) markers.add(mark);
    for (const value of lenientMessages(text))
      for (const tool of toolLikeObjects(value)) if (!isPinnedDefinition(tool)) unpinned.push(tool);
  }
  return { unpinned, markers: [...markers] };
}

/** The JSON-RPC responses (objects with an id) in a body, read leniently. */
export function responsesIn(body: string): Record<string, unknown>[] {
  return lenientMessages(body).filter(
    (value): value is Record<string, unknown> =>
      typeof value === 'object' && value !== null && !Array.isArray(value) && 'id' in value,
  );
}

/** The response to `id` in a body (JSON or SSE), read leniently; undefined when none answers it. */
export function responseTo(body: string, id: unknown): Record<string, unknown> | undefined {
  return responsesIn(body).find((message) => message.id === id);
}
