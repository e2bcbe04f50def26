#!/usr/bin/env node
// Run by each package's `prepack` before `tsc -b`: removes from `dist/` every output whose source
// in `src/` no longer exists. `tsc -b` only writes the outputs of today's sources, so a module
// deleted since the last build (a `git pull`, a branch switch) stayed in `dist/` and went into the
// packed tarball with the rest (`files: ["dist"]`).
//
//   node ../../scripts/pruneDist.mjs      (from a package folder: its dist/ and src/)
import { readdirSync, rmSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const OUTPUT = /\.(?:d\.ts\.map|js\.map|d\.ts|js)$/;

/** Removes the outputs in `<dir>/dist` without a source in `<dir>/src`; returns their paths (relative to dir). */
export function pruneDist(dir) {
  const dist = join(dir, 'dist');
  const removed = [];
  if (!existsSync(dist)) return removed;
  for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !OUTPUT.test(entry.name)) continue;
    const file = join(entry.parentPath, entry.name);
    const source = join(dir, 'src', relative(dist, file).replace(OUTPUT, '.ts'));
    if (existsSync(source)) continue;
    rmSync(file);
    removed.push(relative(dir, file));
  }
  return removed;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const file of pruneDist(process.cwd())) process.stderr.write(`pruned ${file} (its source is gone)\n`);
}
