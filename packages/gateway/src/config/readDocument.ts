import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { invalidField, unreadable, type ConfigErrorCode } from './configError.js';
import { duplicateJsonKey } from './duplicateJsonKey.js';

/** What {@link parseYamlText} made of a text: its plain data, or the first problem found. */
export type YamlParse =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      /** The YAML library's code for the problem (`DUPLICATE_KEY`, `MULTIPLE_DOCS`, …). */
      readonly reason: string;
      /** One line of what is wrong, without its position. */
      readonly message: string;
      readonly line: number | undefined;
      readonly column: number | undefined;
      readonly cause: unknown;
    };

/**
 * Parses a YAML (or JSON: JSON is YAML) text into plain data, strictly: duplicate keys, several
 * documents and unresolved tags are errors, never warnings, because a file that could be read two
 * ways is not a file we may trust to pin anything. The one YAML rule of the config files and the CLI.
 */
export function parseYamlText(text: string): YamlParse {
  const json = parseUniqueJson(text);
  if (json !== undefined) return { ok: true, value: json.value };
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true, version: '1.2', merge: false });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem === undefined) return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  const message =
    problem.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? problem.message;
  return {
    ok: false,
    reason: problem.code,
    message,
    line: problem.linePos?.[0].line,
    column: problem.linePos?.[0].col,
    cause: problem,
  };
}

/**
 * A JSON text with unique keys, read by JSON.parse, or undefined for any other text (YAML, or JSON
 * with a problem: the YAML reader then reads it, or says what is wrong and where). The same value
 * as the YAML reader's (JSON is YAML 1.2: packages/gateway/test/config/readDocument.test.ts holds them equal), but
 * linear: the YAML reader checks each key against every earlier key of its mapping, seconds for a
 * pin of 5,000 tools, and the gateway, `pin` and `approve` read every pin whole.
 */
function parseUniqueJson(text: string): { readonly value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return duplicateJsonKey(text) === undefined ? { value } : undefined;
}

/** Parses the text of a config or pin file with {@link parseYamlText}; a problem is a config error naming the file. */
export function parseDocumentText(text: string, file: string, code: ConfigErrorCode): unknown {
  const parsed = parseYamlText(text);
  if (parsed.ok) return parsed.value;
  const { line, column } = parsed;
  const at = line === undefined ? '' : ` at line ${line}, column ${column ?? 1}`;
  return fail(code, file, `well-formed YAML or JSON with unique keys${at}`, {
    data: { reason: parsed.reason, ...(line === undefined ? {} : { line, column }) },
    note: `(${parsed.message})`,
    cause: parsed.cause,
  });
}

/** Reads a config or pin file as UTF-8 and parses it with {@link parseDocumentText}. */
export async function readDocumentFile(file: string, code: ConfigErrorCode): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw unreadable(code, file, 'a readable file', cause);
  }
  return parseDocumentText(text, file, code);
}

function fail(
  code: ConfigErrorCode,
  file: string,
  expected: string,
  options: Parameters<typeof invalidField>[4],
): never {
  throw invalidField(code, file, '', expected, options);
}
