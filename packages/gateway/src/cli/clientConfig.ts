import { isAbsolute } from 'node:path';
import { stripComments } from 'jsonc-parser';
import { isObject } from '../wire/isObject.js';
import { CliInputError } from './cliInputError.js';

/**
 * A desktop client's MCP configuration, read for `toolpin protect`: Claude Desktop's
 * `claude_desktop_config.json` and Cursor's `mcp.json` list servers under `mcpServers`, VS Code's
 * `mcp.json` under `servers` (beside `inputs`, left alone). The document keeps every other key.
 */
export interface ClientConfig {
  /** The parsed document, every key in its order. */
  readonly document: Record<string, unknown>;
  /** `mcpServers` or `servers`. */
  readonly key: 'mcpServers' | 'servers';
  readonly servers: readonly ClientServer[];
}

/** One server entry of a client config, by what it launches or reaches. */
export type ClientServer =
  | {
      readonly kind: 'stdio';
      readonly name: string;
      readonly entry: Record<string, unknown>;
      readonly launch: StdioEntry;
    }
  | {
      readonly kind: 'http';
      readonly name: string;
      readonly entry: Record<string, unknown>;
      readonly http: HttpEntry;
    }
  | {
      readonly kind: 'wrapped';
      readonly name: string;
      readonly entry: Record<string, unknown>;
      readonly pin: string;
    };

/** A stdio entry as the client launches it. */
export interface StdioEntry {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** A URL entry: `type: http` (Streamable HTTP), `type: sse` (HTTP+SSE), or no type (detected). */
export interface HttpEntry {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly transport?: 'streamable-http' | 'sse';
}

const HTTP_TYPES: Readonly<Record<string, 'streamable-http' | 'sse'>> = {
  http: 'streamable-http',
  'streamable-http': 'streamable-http',
  streamableHttp: 'streamable-http',
  sse: 'sse',
};

/** A value the client substitutes at launch (`${input:token}`, `${env:HOME}`, `${workspaceFolder}`). */
export function isClientVariable(value: string): boolean {
  return value.includes('${');
}

function stringRecord(value: unknown, where: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value) || Object.values(value).some((item) => typeof item !== 'string'))
    throw new CliInputError(`${where}: expected an object of strings`);
  return value as Record<string, string>;
}

// A program that is toolpin: `toolpin` as installed (npm's `.cmd`/`.ps1` shims on Windows).
const TOOLPIN_PROGRAM = /^toolpin(\.cmd|\.exe|\.ps1)?$/i;
const NODE_PROGRAM = /^node(js)?(\.exe)?$/i;
// toolpin's own script: the @toolpin/gateway package's, installed or in a checkout.
const TOOLPIN_SCRIPT = /[\\/](@toolpin[\\/])?gateway[\\/]dist[\\/]cli[\\/]main\.js$/;

function baseName(path: string): string {
  return path.split(/[\\/]/).pop() ?? '';
}

/** How many arguments before `wrap` launch toolpin: 0 (`toolpin wrap`), 1 (`node <toolpin's main.js> wrap`), or none. */
function launcherArgs(command: string, args: readonly string[], launcherScript: string): 0 | 1 | undefined {
  if (TOOLPIN_PROGRAM.test(baseName(command))) return 0;
  const script = args[0];
  if (
    (command === process.execPath || NODE_PROGRAM.test(baseName(command))) &&
    script !== undefined &&
    (script === launcherScript || (isAbsolute(script) && TOOLPIN_SCRIPT.test(script)))
  )
    return 1;
  return undefined;
}

/**
 * The pin file of an entry that already runs through toolpin, or undefined. Only the shape protect
 * writes counts: toolpin launched by the command itself (`toolpin`, or `node` and toolpin's own
 * `dist/cli/main.js`), then exactly `wrap --pin <absolute pin file>`, and nothing after but wrap's
 * own `-- <server command …>`. Words anywhere else in the arguments (a server's install snippet can
 * carry `toolpin wrap --pin x`) never make an entry protected: the server would run unwrapped.
 */
export function wrappedPin(
  command: string,
  args: readonly string[],
  launcherScript: string,
): string | undefined {
  const at = launcherArgs(command, args, launcherScript);
  if (at === undefined || args[at] !== 'wrap' || args[at + 1] !== '--pin') return undefined;
  const pin = args[at + 2];
  if (pin === undefined || !isAbsolute(pin)) return undefined;
  const rest = args.slice(at + 3);
  return rest.length === 0 || (rest[0] === '--' && rest.length > 1) ? pin : undefined;
}

function readServer(name: string, value: unknown, where: string, launcherScript: string): ClientServer {
  if (!isObject(value))
    throw new CliInputError(`${where}: expected an object with "command" (stdio) or "url" (HTTP)`);
  const entry = value as Record<string, unknown>;
  const type = entry.type;
  if (type !== undefined && typeof type !== 'string')
    throw new CliInputError(`${where}.type: expected a string`);
  if (typeof entry.command === 'string' && entry.url === undefined) {
    if (type !== undefined && type !== 'stdio')
      throw new CliInputError(`${where}.type: "${type}" with "command": expected "stdio" or no type`);
    const args = entry.args ?? [];
    if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string'))
      throw new CliInputError(`${where}.args: expected an array of strings`);
    if (entry.cwd !== undefined && (typeof entry.cwd !== 'string' || entry.cwd === ''))
      throw new CliInputError(`${where}.cwd: expected a folder`);
    if (entry.command === '') throw new CliInputError(`${where}.command: expected a program`);
    const pin = wrappedPin(entry.command, args as string[], launcherScript);
    if (pin !== undefined) return { kind: 'wrapped', name, entry, pin };
    return {
      kind: 'stdio',
      name,
      entry,
      launch: {
        command: entry.command,
        args: args as string[],
        env: stringRecord(entry.env, `${where}.env`),
        ...(entry.cwd === undefined ? {} : { cwd: entry.cwd as string }),
      },
    };
  }
  if (typeof entry.url === 'string' && entry.command === undefined) {
    const transport = type === undefined ? undefined : HTTP_TYPES[type];
    if (type !== undefined && transport === undefined)
      throw new CliInputError(`${where}.type: "${type}" with "url": expected "http", "sse" or no type`);
    return {
      kind: 'http',
      name,
      entry,
      http: {
        url: entry.url,
        headers: stringRecord(entry.headers, `${where}.headers`),
        ...(transport === undefined ? {} : { transport }),
      },
    };
  }
  throw new CliInputError(`${where}: expected either "command" (stdio) or "url" (HTTP)`);
}

/**
 * Reads a client config's text (JSON, with comments allowed as VS Code's mcp.json has them; they
 * are kept, since protect edits the text in place). Throws CliInputError naming what to fix: not
 * JSON, no `mcpServers`/`servers` object, an entry of unknown shape.
 */
export function parseClientConfig(text: string, file: string, launcherScript: string): ClientConfig {
  let document: unknown;
  try {
    // Comments become spaces; the rest is parsed by JSON.parse, as strictly as before.
    document = JSON.parse(stripComments(text.replace(/^\uFEFF/, ''), ' '));
  } catch (error) {
    throw new CliInputError(`${file}: not JSON (${(error as Error).message}); fix it`);
  }
  const shape = 'expected a JSON object with "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)';
  if (!isObject(document)) throw new CliInputError(`${file}: ${shape}`);
  const root = document as Record<string, unknown>;
  const key = 'mcpServers' in root ? 'mcpServers' : 'servers' in root ? 'servers' : undefined;
  if (key === undefined) throw new CliInputError(`${file}: ${shape}`);
  const list = root[key];
  if (!isObject(list)) throw new CliInputError(`${file}: "${key}" must be an object of servers by name`);
  const servers = Object.entries(list).map(([name, value]) =>
    readServer(name, value, `${file}: ${key}.${name}`, launcherScript),
  );
  return { document: root, key, servers };
}

/** The indentation and line ending of a JSON text, so a rewrite looks like the original. */
export interface JsonLayout {
  readonly indent: string;
  readonly eol: '\n' | '\r\n';
  readonly finalNewline: boolean;
}

/** How `text` is laid out: the first indented line's indentation (two spaces when none). */
export function jsonLayout(text: string): JsonLayout {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  return { indent, eol, finalNewline: /\r?\n$/.test(text) };
}
