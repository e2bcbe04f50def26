/** Stable codes carried by {@link DigestError}; callers match on these, never on messages. */
export type DigestErrorCode =
  | 'DIGEST_NOT_CANONICAL'
  | 'DIGEST_TOO_DEEP'
  | 'DIGEST_TOOLS_NOT_ARRAY'
  | 'DIGEST_TOOL_NOT_OBJECT'
  | 'DIGEST_ITEMS_NOT_ARRAY'
  | 'DIGEST_ITEM_NOT_OBJECT';

/** What a {@link DigestError} knows about where it happened. */
export interface DigestErrorData {
  /** Position of the offending tool (prompt, template) in its array, when known. */
  index?: number;
  /** The offending tool's name (a prompt's name, a template's uriTemplate), when it has a string one. */
  name?: string;
  /** Why the value has no digest (e.g. "NaN is not allowed"). */
  reason?: string;
}

/** The one error class of this package: invalid input that has no digest under the derivation. */
export class DigestError extends Error {
  readonly code: DigestErrorCode;
  readonly data: DigestErrorData;

  constructor(code: DigestErrorCode, message: string, data: DigestErrorData = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DigestError';
    this.code = code;
    this.data = data;
  }
}

/** Describes a tool for an error message: `tool "x" at index 3`, `tool at index 3`, or `tool "x"`. */
export function describeTool(data: DigestErrorData): string {
  return describeItem('tool', data);
}

/** Describes one item of a listing for an error message: `prompt "x" at index 3`, and so on. */
export function describeItem(noun: string, data: DigestErrorData): string {
  const name = data.name === undefined ? '' : ` ${JSON.stringify(data.name)}`;
  const index = data.index === undefined ? '' : ` at index ${data.index}`;
  return `${noun}${name}${index}`;
}

/** Names the JSON type of a value for an error message: "null", "an array", "a string", ... */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' || type === 'undefined' ? `an ${type}` : `a ${type}`;
}
