// Red team: `pnpm pack` built with `tsc -b`, which never removes the output of a deleted source, so
// a checkout's stale modules (five in a long-lived one) went into the installed tarball.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: a plain .mjs script without types
import { pruneDist } from '../../scripts/pruneDist.mjs';

const prune = pruneDist as (dir: string) => string[];

describe('prepack: scripts/pruneDist.mjs', () => {
  it('removes the outputs whose source is gone, and keeps the others', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolpin-prune-'));
    try {
      await mkdir(join(dir, 'src', 'cli'), { recursive: true });
      await mkdir(join(dir, 'dist', 'cli'), { recursive: true });
      await writeFile(join(dir, 'src', 'cli', 'main.ts'), '');
      const outputs = ['main.js', 'main.d.ts', 'main.js.map', 'main.d.ts.map'];
      for (const name of [...outputs, ...outputs.map((o) => o.replace('main', 'gone'))])
        await writeFile(join(dir, 'dist', 'cli', name), '');
      await writeFile(join(dir, 'dist', 'package.json'), '{}');
      expect(prune(dir).sort()).toEqual(
        outputs.map((o) => join('dist', 'cli', o.replace('main', 'gone'))).sort(),
      );
      for (const name of outputs) expect(existsSync(join(dir, 'dist', 'cli', name))).toBe(true);
      expect(existsSync(join(dir, 'dist', 'package.json'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs before the build in both packages', async () => {
    for (const pkg of ['gateway', 'digest']) {
      const manifest = JSON.parse(
        await readFile(new URL(`../../packages/${pkg}/package.json`, import.meta.url), 'utf8'),
      ) as { scripts: { prepack: string } };
      expect(manifest.scripts.prepack).toBe('node ../../scripts/pruneDist.mjs && tsc -b');
    }
  });
});
