// The jest transform of every `.ts` file in the suite: esbuild strips the types, file by file, and
// keeps the ES modules as they are (jest runs them as ESM). Nothing is type-checked here: `tsc -b`
// checks the packages before jest runs, `pnpm typecheck:tests` the tests. esbuild replaced ts-jest
// (TypeScript's transpileModule) because a fresh clone transforms every file cold: the transform
// was about a third of the suite's CPU time on a cold cache.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { transform, transformSync, version } from 'esbuild';

// A change of this file or of esbuild invalidates jest's cache of transformed files.
const transformId = createHash('sha256')
  .update(readFileSync(new URL(import.meta.url)))
  .update(version)
  .digest('hex');

/** esbuild's options for one file: TypeScript in, ES2022 modules out (tsconfig.base.json's target). */
function optionsFor(path) {
  return {
    loader: 'ts',
    format: 'esm',
    target: 'es2022',
    sourcefile: path,
    sourcemap: 'external',
    // tsc's semantics for target ES2022: class fields are defined, not assigned.
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
  };
}

/** @type {import('@jest/transform').AsyncTransformer} */
export default {
  canInstrument: false,
  getCacheKey(source, path) {
    return createHash('sha256').update(transformId).update(path).update('\0').update(source).digest('hex');
  },
  getCacheKeyAsync(source, path) {
    return Promise.resolve(this.getCacheKey(source, path));
  },
  // Jest loads ES modules through this one.
  async processAsync(source, path) {
    const { code, map } = await transform(source, optionsFor(path));
    return { code, map };
  },
  // For a synchronous require (none in this suite today).
  process(source, path) {
    const { code, map } = transformSync(source, optionsFor(path));
    return { code, map };
  },
};
