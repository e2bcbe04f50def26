import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { invalidField, type ConfigErrorCode } from './configError.js';

/**
 * Parses the text of a YAML or JSON file (JSON is YAML) into plain data. Strict: duplicate keys,
 * several documents, and unresolved tags are errors, never warnings, because a file that could be
 * read two ways is not a file we may trust to pin anything.
 */
export function parseDocumentText(text: string, file: string, code: ConfigErrorCode): unknown {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true, version: '1.2', merge: false });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem !== undefined) {
    const [line, column] = [problem.linePos?.[0].line, problem.linePos?.[0].col];
    const at = line === undefined ? '' : ` at line ${line}, column ${column ?? 1}`;
    const reason =
      problem.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? problem.message;
    return fail(code, file, `well-formed YAML or JSON with unique keys${at}`, {
      data: { reason: problem.code, ...(line === undefined ? {} : { line, column }) },
      note: `(${reason})`,
      cause: problem,
    });
  }
  return doc.toJS({ maxAliasCount: 100 });
}

/** Reads a config or pin file as UTF-8 and parses it with {@link parseDocumentText}. */
export async function readDocumentFile(file: string, code: ConfigErrorCode): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code ?? String(cause);
    return fail(code, file, 'a readable file', { data: { reason }, note: `(${reason})`, cause });
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
