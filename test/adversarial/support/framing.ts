import type { ServerResponse } from 'node:http';

/** How a JSON-RPC response envelope is spelled (the message it carries is the same). */
export interface EnvelopeShape {
  /** `result` before `id` and `jsonrpc`, or after. @default false */
  readonly reversed?: boolean;
  /** Adds `"error": <value>` beside `result` (not valid JSON-RPC). */
  readonly error?: null | false;
  /** Adds `"method": null` (not valid JSON-RPC). */
  readonly methodNull?: boolean;
  /** Adds a member JSON-RPC does not define. */
  readonly extraMember?: boolean;
  /** Writes `result` twice: this value first, the real one last (JSON.parse keeps the last). */
  readonly decoyResult?: unknown;
}

/** The exact JSON text of a response with this id and result. */
export function envelopeText(id: unknown, result: unknown, shape: EnvelopeShape = {}): string {
  const parts: string[] = [];
  const head = [`"jsonrpc":"2.0"`, `"id":${JSON.stringify(id)}`];
  const body: string[] = [];
  if (shape.decoyResult !== undefined) body.push(`"result":${JSON.stringify(shape.decoyResult)}`);
  body.push(`"result":${JSON.stringify(result)}`);
  if (shape.error !== undefined) body.push(`"error":${JSON.stringify(shape.error)}`);
  if (shape.methodNull === true) body.push(`"method":null`);
  if (shape.extraMember === true) body.push(`"x-vendor":{"note":"extra"}`);
  parts.push(...(shape.reversed === true ? [...body, ...head] : [...head, ...body]));
  return `{${parts.join(',')}}`;
}

/** How an SSE body is spelled. */
export interface SseShape {
  /** @default '\n' */
  readonly lineEnd?: '\n' | '\r\n' | '\r';
  /** What follows `data:` before the JSON. @default ' ' */
  readonly dataPrefix?: string;
  /** Spreads the JSON over several data lines (pretty-printed). @default false */
  readonly multiLine?: boolean;
  /** An empty `data:` line before the JSON (the data then starts with a newline). @default false */
  readonly emptyFirstData?: boolean;
  /** A `: comment` line in the event. @default false */
  readonly comment?: boolean;
  /** The `event:` field, or none. @default 'message' */
  readonly event?: string | undefined;
  /** An `id:` field. */
  readonly id?: string;
}

/** One SSE event carrying `json`, spelled as `shape` says. */
export function sseEvent(json: string, shape: SseShape = {}): string {
  const end = shape.lineEnd ?? '\n';
  const prefix = shape.dataPrefix ?? ' ';
  const lines: string[] = [];
  if (shape.comment === true) lines.push(': adversarial comment');
  if (shape.id !== undefined) lines.push(`id: ${shape.id}`);
  const event = 'event' in shape ? shape.event : 'message';
  if (event !== undefined) lines.push(`event: ${event}`);
  if (shape.emptyFirstData === true) lines.push('data:');
  const text = shape.multiLine === true ? JSON.stringify(JSON.parse(json), null, 1) : json;
  for (const line of text.split('\n')) lines.push(`data:${prefix}${line}`);
  return `${lines.join(end)}${end}${end}`;
}

/** Answers with exactly this Content-Type spelling and body (explicit Content-Length). */
export function answerText(
  res: ServerResponse,
  contentType: string | undefined,
  body: string,
  status = 200,
  headers: Record<string, string> = {},
): void {
  const head: Record<string, string | number> = { 'content-length': Buffer.byteLength(body), ...headers };
  if (contentType !== undefined) head['content-type'] = contentType;
  res.writeHead(status, head);
  res.end(body);
}

/** A `notifications/message` whose data names `tag`: the upstream's "this is the end" on a stream. */
export function sentinelText(tag: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: { level: 'info', data: tag },
  });
}
