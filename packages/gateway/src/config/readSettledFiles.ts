import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { GatewayError } from '../errors.js';
import { unreadable } from './configError.js';

/** One file as read twice: its text when both reads agree, `changing` when they differ, or why it cannot be read. */
export type SettledRead =
  | { readonly file: string; readonly text: string }
  | { readonly file: string; readonly changing: true }
  | { readonly file: string; readonly error: GatewayError };

async function readBytes(file: string): Promise<Buffer | GatewayError> {
  // Bytes, not text: two reads are compared exactly, before any decoding.
  try {
    return await readFile(file);
  } catch (cause) {
    return unreadable('GW_PIN_FILE_INVALID', file, 'a readable file', cause);
  }
}

/**
 * Reads every file, waits `settleMs`, and reads them again. A file is settled when both reads
 * return the same bytes: a writer still at work (an editor saving in place, a copy, a checkout)
 * changes them in between, and what it left half written is never parsed. A file readable only
 * once (created or deleted in between) is `changing` too. Resolves undefined when `signal` aborts
 * the wait. `onFirstRead` runs between the two reads.
 */
export async function readSettledFiles(
  files: readonly string[],
  settleMs: number,
  signal: AbortSignal,
  onFirstRead: () => void = () => undefined,
): Promise<SettledRead[] | undefined> {
  const first = await Promise.all(files.map(readBytes));
  onFirstRead();
  try {
    await sleep(settleMs, undefined, { signal, ref: false });
  } catch {
    return undefined;
  }
  const second = await Promise.all(files.map(readBytes));
  return files.map((file, index): SettledRead => settle(file, first[index], second[index]));
}

function settle(
  file: string,
  before: Buffer | GatewayError | undefined,
  after: Buffer | GatewayError | undefined,
): SettledRead {
  if (Buffer.isBuffer(before) && Buffer.isBuffer(after))
    return before.equals(after) ? { file, text: after.toString('utf8') } : { file, changing: true };
  if (Buffer.isBuffer(before) || after === undefined || Buffer.isBuffer(after))
    return { file, changing: true };
  return { file, error: after };
}
