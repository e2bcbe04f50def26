import { chmod, lstat, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../src/config/writeFileAtomic.js';

describe('writeFileAtomic', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-atomic-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('replaces a symlink at the target with a file of its own, never writing through it', async () => {
    const target = join(dir, 'bashrc');
    await writeFile(target, 'export PATH=/usr/bin\n');
    await chmod(target, 0o644);
    const file = join(dir, 'state.json');
    await symlink(target, file);
    await writeFileAtomic(file, '{"protected":"x"}\n', 0o600);
    expect((await lstat(file)).isFile()).toBe(true);
    expect(await readFile(file, 'utf8')).toBe('{"protected":"x"}\n');
    expect(await readFile(target, 'utf8')).toBe('export PATH=/usr/bin\n');
    // The mode of the file the link pointed at is not taken over: the new file gets newMode.
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('keeps the mode of a regular file it replaces, and leaves no temporary file behind', async () => {
    const file = join(dir, 'pin.yaml');
    await writeFile(file, 'old\n');
    await chmod(file, 0o640);
    await writeFileAtomic(file, 'new\n', 0o600);
    expect(await readFile(file, 'utf8')).toBe('new\n');
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
