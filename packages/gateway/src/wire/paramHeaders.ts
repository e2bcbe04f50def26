import type { IncomingHttpHeaders } from 'node:http';
import { isObject } from './isObject.js';
import type { JsonRpcBody } from './jsonRpc.js';

/**
 * Tool arguments mirrored into HTTP headers (MCP 2026-07-28 Streamable HTTP, SEP-2243): a property
 * of a tool's `inputSchema` annotated `"x-mcp-header": "<Name>"` is sent by the client both in the
 * body and as `Mcp-Param-<Name>`, so that intermediaries can route on it. A server that reads the
 * body must reject a header that disagrees with it (HTTP 400, -32020).
 */
export const PARAM_HEADER_PREFIX = 'mcp-param-';

/** One `x-mcp-header` designation: the header's name and the path of the argument it mirrors. */
export interface ParamDeclaration {
  /** The name as the schema spells it (`Region` for `Mcp-Param-Region`). */
  readonly name: string;
  /** Member names from the arguments object down to the value (a chain of `properties`). */
  readonly path: readonly string[];
  readonly type: 'string' | 'integer' | 'boolean';
}

// RFC 9110 §5.1 token: what a header field name may be made of.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const DECLARED_TYPES: ReadonlySet<unknown> = new Set(['string', 'integer', 'boolean']);
const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
// Canonical Base64 (RFC 4648 §4, padded): anything else in a sentinel is refused, never guessed at.
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/**
 * The `x-mcp-header` designations of an inputSchema: the annotations reached from the root through
 * `properties` alone. Undefined when the set is invalid as the spec defines it (an annotation on
 * the root, a name that is not a header token, a type other than string, integer or boolean, two
 * names equal but for case); annotations elsewhere (under `items`, `anyOf`, `$ref`…) designate nothing:
 * clients must not call such a tool, and the gateway then checks no header for it.
 */
export function paramDeclarations(schema: unknown): readonly ParamDeclaration[] | undefined {
  if (!isObject(schema)) return [];
  if (declarationsOf.has(schema)) return declarationsOf.get(schema);
  const found = scanDeclarations(schema);
  declarationsOf.set(schema, found);
  return found;
}

// Pinned schemas are frozen and live as long as their pin: each is scanned once.
const declarationsOf = new WeakMap<object, readonly ParamDeclaration[] | undefined>();

function scanDeclarations(schema: Record<string, unknown>): readonly ParamDeclaration[] | undefined {
  const found: ParamDeclaration[] = [];
  const seen = new Set<string>();
  const visit = (node: unknown, path: readonly string[]): boolean => {
    if (!isObject(node)) return true;
    if (Object.hasOwn(node, 'x-mcp-header')) {
      const name = node['x-mcp-header'];
      // The root is the arguments object, never a header.
      if (path.length === 0 || typeof name !== 'string' || !TOKEN.test(name)) return false;
      if (!DECLARED_TYPES.has(node.type)) return false;
      if (seen.has(name.toLowerCase())) return false;
      seen.add(name.toLowerCase());
      found.push({ name, path, type: node.type as ParamDeclaration['type'] });
    }
    const properties = node.properties;
    if (!isObject(properties)) return true;
    return Object.entries(properties).every(([key, child]) => visit(child, [...path, key]));
  };
  return visit(schema, []) ? found : undefined;
}

/** The header text of a primitive argument (spec: decimal, `true`/`false`), undefined for any other value. */
function primitiveText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
}

/** A header value as sent: plain visible ASCII as is, anything else in the Base64 sentinel. */
export function encodeParamValue(text: string): string {
  const plain =
    text !== '' &&
    text === text.trim() &&
    // Visible ASCII and space only: a tab, like any control character, goes in the sentinel.
    /^[\x20-\x7e]*$/.test(text) &&
    !(text.startsWith(SENTINEL_PREFIX) && text.endsWith(SENTINEL_SUFFIX));
  return plain ? text : `${SENTINEL_PREFIX}${Buffer.from(text, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/**
 * A header value read: the sentinel's UTF-8 text, a literal as is; undefined for a sentinel that is
 * not canonical Base64 of UTF-8. Exact: a leading BOM is the text's (TextDecoder strips it by
 * default, and "\uFEFFname" would then pass for "name", which readers that keep it see differently).
 */
export function decodeParamValue(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX))) return value;
  const encoded = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(encoded)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
}

/** The argument at `path`, following own members of objects only. */
function argumentAt(args: unknown, path: readonly string[]): unknown {
  let node = args;
  for (const key of path) {
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** True when the header's text stands for the argument: numerically for integers, else as text. */
function agrees(declaration: ParamDeclaration, decoded: string, value: unknown, text: string): boolean {
  if (declaration.type === 'integer' && typeof value === 'number' && DECIMAL.test(decoded))
    return Number(decoded) === value;
  return decoded === text;
}

/** The outcome of checking a request's `Mcp-Param-*` headers: the headers to forward, or why it is refused. */
export type ParamHeaderCheck =
  | { readonly ok: true; readonly headers: Readonly<Record<string, string>> }
  | { readonly ok: false; readonly problem: string };

/** One declaration checked against its header: the header to forward, none, or the problem. */
function checkDeclaration(
  headers: IncomingHttpHeaders,
  declaration: ParamDeclaration,
  args: unknown,
  required: boolean,
): { forward?: string; problem?: string } {
  const header = `Mcp-Param-${declaration.name}`;
  const raw = headers[PARAM_HEADER_PREFIX + declaration.name.toLowerCase()];
  const value = argumentAt(args, declaration.path);
  // A null or absent argument, or one with no header text (an object, an unsafe integer), has no header.
  const text = value === null ? undefined : primitiveText(value);
  if (text === undefined) return {};
  if (raw === undefined)
    return required ? { problem: `${header} header missing for an argument the tool mirrors` } : {};
  const decoded = typeof raw === 'string' ? decodeParamValue(raw) : undefined;
  if (decoded === undefined) return { problem: `${header} header is not a valid value` };
  if (!agrees(declaration, decoded, value, text))
    return { problem: `${header} header does not match the argument it mirrors` };
  return { forward: encodeParamValue(text) };
}

/**
 * Checks the `Mcp-Param-*` headers of a request against its body and the pinned designations of
 * the tool it calls (`inputSchemaOf(name)`: the pinned inputSchema, undefined when none), as the
 * spec says a server does: a designated argument with a value needs its header (when `required`:
 * a 2026-07-28 request), which must decode to that value. Returns the headers the gateway forwards,
 * each written by the gateway from the checked argument; a header it could not check (no single
 * tools/call, no designation, no value) is not forwarded. Problems never quote values.
 */
export function checkParamHeaders(
  headers: IncomingHttpHeaders,
  body: JsonRpcBody,
  inputSchemaOf: (toolName: string) => unknown,
  required: boolean,
): ParamHeaderCheck {
  const message = body.batch ? undefined : body.messages[0];
  if (message === undefined || !('method' in message) || message.method !== 'tools/call')
    return { ok: true, headers: {} };
  const params = isObject(message.params) ? message.params : {};
  if (typeof params.name !== 'string') return { ok: true, headers: {} };
  const declarations = paramDeclarations(inputSchemaOf(params.name)) ?? [];
  const forward: Record<string, string> = {};
  for (const declaration of declarations) {
    const checked = checkDeclaration(headers, declaration, params.arguments, required);
    if (checked.problem !== undefined) return { ok: false, problem: checked.problem };
    if (checked.forward !== undefined) forward[`Mcp-Param-${declaration.name}`] = checked.forward;
  }
  return { ok: true, headers: forward };
}
