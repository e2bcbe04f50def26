import { readFile } from 'node:fs/promises';
import { applyEdits, modify } from 'jsonc-parser';
import { parseDocument } from 'yaml';
import { parsePinFile } from './pinFile.js';
import { isStdioUpstream } from './upstreamKind.js';
import { writeFileAtomic } from './writeFileAtomic.js';

/**
 * The `env` values of a stdio pin written by an earlier `toolpin protect` (secrets copied out of
 * the client config), or undefined when it holds none (or is not a readable stdio pin).
 */
export async function pinnedEnvValues(file: string): Promise<Record<string, string> | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const { upstream } = parsePinFile(text, file);
    if (!isStdioUpstream(upstream) || Object.keys(upstream.env).length === 0) return undefined;
    return { ...upstream.env };
  } catch {
    return undefined;
  }
}

/**
 * Rewrites a stdio pin's `upstream.env` as names only: the values are removed and their names
 * join `upstream.passEnv` (the client passes them to wrap). Every other line of the file is kept
 * (a YAML document or JSON text edited in place); the file is replaced atomically, its mode kept.
 */
export async function moveEnvToNames(file: string, names: readonly string[]): Promise<void> {
  const text = await readFile(file, 'utf8');
  const { upstream } = parsePinFile(text, file);
  const passEnv = [
    ...new Set([...(isStdioUpstream(upstream) ? (upstream.passEnv ?? []) : []), ...names]),
  ].sort();
  let next: string;
  if (text.trimStart().startsWith('{')) {
    const formattingOptions = { insertSpaces: true, tabSize: 2 };
    next = applyEdits(text, modify(text, ['upstream', 'env'], undefined, { formattingOptions }));
    next = applyEdits(next, modify(next, ['upstream', 'passEnv'], passEnv, { formattingOptions }));
  } else {
    const document = parseDocument(text);
    document.deleteIn(['upstream', 'env']);
    document.setIn(['upstream', 'passEnv'], passEnv);
    next = document.toString();
  }
  parsePinFile(next, file);
  await writeFileAtomic(file, next);
}
