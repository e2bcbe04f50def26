import { randomBytes } from 'node:crypto';
import { lstat, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `file` with `text` atomically: a temporary file in the same folder (a dotfile, which
 * the servers-folder watcher ignores), written and flushed, then renamed over the target, so a
 * reader (the gateway's watcher, git) sees the old bytes or the new ones, never half a pin.
 * A link is never followed: the temporary file is created exclusively (a link at its name fails
 * the write) and the rename replaces a symlink at `file` itself, never the file it points at.
 * A regular file's permission bits are kept; a new file (or one replacing a link) gets `newMode`
 * (0o600 for one holding secrets).
 */
export async function writeFileAtomic(file: string, text: string, newMode = 0o644): Promise<void> {
  const mode = await lstat(file).then(
    (stats) => (stats.isFile() ? stats.mode & 0o777 : newMode),
    () => newMode,
  );
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
