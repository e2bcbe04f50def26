import { createHash } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseJsonc } from 'jsonc-parser';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { isObject } from '../wire/isObject.js';
import { CliInputError } from './cliInputError.js';
import { entryText, replaceEntryText, setEntryMember } from './clientConfigText.js';

/**
 * What protect keeps beside a client config: the original (`<config>.toolpin-backup`, byte for
 * byte) and what it wrote (`<config>.toolpin-state.json`: the config's SHA-256 and each entry it
 * rewrote, as written), so that a config the client rewrote since is merged, never refused.
 */

/** Where protect keeps the original config, byte for byte: beside it. */
export function backupFileOf(config: string): string {
  return `${config}.toolpin-backup`;
}

/** Where protect records what it wrote, so unprotect can tell a later edit. */
export function stateFileOf(config: string): string {
  return `${config}.toolpin-state.json`;
}

/**
 * Refuses a file protect keeps beside the config (the backup, the state file) that is a symlink
 * or anything but a regular file: a repository can ship `.vscode/mcp.json.toolpin-state.json`
 * pointing at `~/.bashrc`, and writing or restoring through it would change or leak that file.
 * Checked before anything is written; the writes themselves replace the path, never follow it.
 */
export async function refuseLinkedSideFile(file: string): Promise<void> {
  const stats = await lstat(file).catch(() => undefined);
  if (stats === undefined || stats.isFile()) return;
  const what = stats.isSymbolicLink() ? 'a symlink' : 'not a regular file';
  throw new CliInputError(
    `${file}: ${what}; toolpin never writes or reads its own files through one: remove it, then run again`,
  );
}

/** The SHA-256 of a config's bytes, as the state file records it. */
export function configDigest(bytes: Buffer | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** What protect recorded: the digest of the config it wrote, and each entry it rewrote as written. */
export interface ProtectState {
  readonly digest: string | undefined;
  /** Entry name → the entry as protect wrote it (absent in a state file of an earlier toolpin). */
  readonly written: ReadonlyMap<string, unknown>;
}

/** The state recorded beside `config` (empty when there is none or it cannot be read). */
export async function readProtectState(config: string): Promise<ProtectState> {
  const text = await readFile(stateFileOf(config), 'utf8').catch(() => undefined);
  let state: unknown;
  try {
    state = text === undefined ? undefined : JSON.parse(text);
  } catch {
    state = undefined;
  }
  const record = isObject(state) ? (state as { protected?: unknown; entries?: unknown }) : {};
  return {
    digest: typeof record.protected === 'string' ? record.protected : undefined,
    written: new Map(isObject(record.entries) ? Object.entries(record.entries) : []),
  };
}

/** Records what protect wrote: the config's digest and its rewritten entries (owner-only: entries hold env values). */
export async function writeProtectState(
  config: string,
  text: string,
  written: ReadonlyMap<string, unknown>,
): Promise<void> {
  const state = { protected: configDigest(text), entries: Object.fromEntries(written) };
  await writeFileAtomic(stateFileOf(config), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

function entryValue(text: string, key: string, name: string): Record<string, unknown> | undefined {
  const raw = entryText(text, key, name);
  const value: unknown = raw === undefined ? undefined : parseJsonc(raw);
  return isObject(value) ? (value as Record<string, unknown>) : undefined;
}

/** What {@link unprotectedText} made of a config. */
export interface Unprotected {
  readonly text: string;
  /** Entries protect wrote and the person has since changed where protect did: left as they are. */
  readonly left: readonly string[];
}

/**
 * A config with every entry protect rewrote put back as the original has it, whatever else the
 * client or the person changed since: the members protect changed (command, args, url…) take the
 * original's text again, and a member changed since protect (a rotated key in `env`) keeps its new
 * value. An entry whose protected members were changed since is left as it is and named.
 * `written` missing an entry (a state of an earlier toolpin): its current value counts as written.
 */
export function unprotectedText(
  current: string,
  original: string,
  key: string,
  written: ReadonlyMap<string, unknown>,
  protectedNames: readonly string[],
): Unprotected {
  let text = current;
  const left: string[] = [];
  for (const name of new Set([...written.keys(), ...protectedNames])) {
    const now = entryValue(text, key, name);
    const before = entryValue(original, key, name);
    const raw = entryText(original, key, name);
    if (now === undefined || before === undefined || raw === undefined) continue;
    const wrote = written.get(name) ?? now;
    if (!isObject(wrote)) continue;
    const after = wrote as Record<string, unknown>;
    const members = new Set([...Object.keys(before), ...Object.keys(after), ...Object.keys(now)]);
    const owned = [...members].filter((member) => !isDeepStrictEqual(before[member], after[member]));
    if (owned.some((member) => !isDeepStrictEqual(now[member], after[member]))) {
      left.push(name);
      continue;
    }
    text = replaceEntryText(text, key, name, raw);
    for (const member of members)
      if (!owned.includes(member) && !isDeepStrictEqual(now[member], after[member]))
        text = setEntryMember(text, key, name, member, now[member]);
  }
  return { text, left };
}
