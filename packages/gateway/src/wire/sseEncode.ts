import type { EventSourceMessage } from 'eventsource-parser';

/** Encodes one SSE event; `data` may span lines, each becomes its own `data:` field. */
export function encodeSseEvent(event: EventSourceMessage): string {
  let out = '';
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  // A data value never contains a lone \r here: the parser split lines on \r, \n and \r\n.
  for (const line of event.data.split('\n')) out += `data: ${line}\n`;
  return out + '\n';
}

/** Encodes a JSON-RPC message as one `message` event, as MCP servers send them. */
export function encodeSseMessage(message: unknown, id?: string): string {
  return encodeSseEvent(
    id === undefined ? { data: JSON.stringify(message) } : { id, data: JSON.stringify(message) },
  );
}
