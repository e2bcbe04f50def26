import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { applyEdits, findNodeAtLocation, modify, parseTree, type FormattingOptions } from 'jsonc-parser';
import { jsonLayout } from './clientConfig.js';
import { CliInputError } from './cliInputError.js';

/**
 * Edits of a client config's text in place (jsonc-parser's `modify` / `applyEdits`): only the
 * members protect changes are rewritten, so every other entry, comment and line keeps its exact
 * text. A config is never re-serialized.
 */

/** The formatting of new text, taken from the config's own (its indentation and line ending). */
function formattingOf(text: string): FormattingOptions {
  const layout = jsonLayout(text);
  const tabs = layout.indent.includes('\t');
  return { insertSpaces: !tabs, tabSize: tabs ? 1 : layout.indent.length, eol: layout.eol };
}

/** The exact text of the entry `name` under `key` (`mcpServers`, `servers`), or undefined. */
export function entryText(text: string, key: string, name: string): string | undefined {
  const tree = parseTree(text);
  const node = tree === undefined ? undefined : findNodeAtLocation(tree, [key, name]);
  return node === undefined ? undefined : text.slice(node.offset, node.offset + node.length);
}

/** `text` with the entry `name` replaced by `raw` (another text of an entry), exactly. */
export function replaceEntryText(text: string, key: string, name: string, raw: string): string {
  const tree = parseTree(text);
  const node = tree === undefined ? undefined : findNodeAtLocation(tree, [key, name]);
  if (node === undefined) return text;
  return `${text.slice(0, node.offset)}${raw}${text.slice(node.offset + node.length)}`;
}

/**
 * `text` with one member of an entry set to `value` (undefined removes it): the member's own text
 * is replaced, every other one kept as written.
 */
export function setEntryMember(
  text: string,
  key: string,
  name: string,
  member: string,
  value: unknown,
): string {
  const tree = parseTree(text);
  const node = tree === undefined ? undefined : findNodeAtLocation(tree, [key, name, member]);
  const now = node === undefined ? undefined : text.slice(node.offset, node.offset + node.length);
  // A value written on one line stays on one line (`"args": ["a", "b"]`, `"env": { "K": "v" }`).
  if (node !== undefined && now !== undefined && value !== undefined && !now.includes('\n')) {
    const line = JSON.stringify(value, null, 1)
      .replace(/\[\n\s*/g, '[')
      .replace(/\n\s*\]/g, ']')
      .replace(/\n\s*/g, ' ');
    return `${text.slice(0, node.offset)}${line}${text.slice(node.offset + node.length)}`;
  }
  // A member removed takes its comma with it, and nothing else is reformatted.
  const options = value === undefined ? {} : { formattingOptions: formattingOf(text) };
  const edits = modify(text, [key, name, member], value, options);
  return applyEdits(text, edits);
}

/**
 * `text` with the entry `name` changed from `before` to `after`, member by member: a member whose
 * value is unchanged keeps its text, a changed one is rewritten, a new one is added at the end.
 */
export function rewriteEntry(
  text: string,
  key: string,
  name: string,
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
): string {
  let next = text;
  for (const member of new Set([...Object.keys(before), ...Object.keys(after)]))
    if (!isDeepStrictEqual(before[member], after[member]))
      next = setEntryMember(next, key, name, member, after[member]);
  return next;
}

/**
 * The first member name that appears twice in one object of the text, or undefined. JSON.parse
 * keeps the last of two and an edit would land on the first: such a config is refused, so what
 * protect edits is always what the client reads.
 */
export function duplicateMember(text: string): string | undefined {
  const pending = [parseTree(text)];
  for (let node = pending.pop(); node !== undefined || pending.length > 0; node = pending.pop()) {
    if (node === undefined) continue;
    if (node.type === 'object') {
      const names = new Set<string>();
      for (const property of node.children ?? []) {
        const name = property.children?.[0]?.value as string | undefined;
        if (name !== undefined && names.has(name)) return name;
        if (name !== undefined) names.add(name);
      }
    }
    pending.push(...(node.children ?? []));
  }
  return undefined;
}

/** Reads the config's bytes as UTF-8 text, exactly: a text that would not write back the same bytes is refused. */
export async function readConfigText(file: string): Promise<{ bytes: Buffer; text: string }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new CliInputError(`${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) throw new CliInputError(`${file}: not UTF-8 text`);
  const twice = duplicateMember(text);
  if (twice !== undefined)
    throw new CliInputError(`${file}: "${twice}" appears twice in one object; keep one, then run again`);
  return { bytes, text };
}
