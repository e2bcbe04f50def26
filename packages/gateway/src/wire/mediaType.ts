import { parse } from 'content-type';

/** A media type parsed per RFC 9110 §8.3.1: type and subtype lower-cased, parameter names too. */
export interface MediaType {
  /** `type/subtype`, lower case. */
  readonly type: string;
  /** Parameters by lower-cased name (values as sent, quotes removed). */
  readonly parameters: Readonly<Record<string, string>>;
}

// A peer sends the same few Content-Type values message after message: each is parsed once
// (bounded: forgotten all at once when full; the parsed values are frozen and shared).
const MAX_PARSED = 64;
const parsed = new Map<string, MediaType | undefined>();

/** Parses a Content-Type value; undefined when it is absent or not a valid media type. */
export function parseMediaType(value: string | readonly string[] | undefined): MediaType | undefined {
  if (value === undefined || typeof value !== 'string') return undefined;
  if (parsed.has(value)) return parsed.get(value);
  let type: MediaType | undefined;
  try {
    const { type: name, parameters } = parse(value);
    type = Object.freeze({ type: name, parameters: Object.freeze(parameters) });
  } catch {
    type = undefined;
  }
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(value, type);
  return type;
}

/** What an MCP body is, judged from its parsed media type (never from the spelling of the header). */
export type McpBodyKind = 'json' | 'sse' | 'other';

/** JSON (`application/json`) or SSE (`text/event-stream`), the only two bodies of an MCP exchange. */
export function mcpBodyKind(type: MediaType | undefined): McpBodyKind {
  if (type?.type === 'application/json') return 'json';
  if (type?.type === 'text/event-stream') return 'sse';
  return 'other';
}

/**
 * True when the media type's charset (if any) is UTF-8, the only encoding the gateway decodes:
 * a body it read as UTF-8 but the upstream read otherwise (e.g. UTF-7) would be two messages.
 */
export function isUtf8Charset(type: MediaType): boolean {
  const charset = type.parameters['charset'];
  return charset === undefined || /^utf-?8$/i.test(charset);
}
