import { fileURLToPath } from 'node:url';

// One jest run over every package and the end-to-end scenarios in test/.
// TypeScript is transpiled per file by esbuild (scripts/jestTransform.mjs); `tsc -b` type-checks
// before jest runs.
const transform = { '^.+\\.ts$': fileURLToPath(new URL('./scripts/jestTransform.mjs', import.meta.url)) };
const esm = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testEnvironment: 'node',
};

/** @type {import('jest').Config} */
export default {
  // Two workers on the 2-core machines the suite runs on: most tests wait on sockets and child
  // processes, so a second worker overlaps those waits (the transports tests: 100 s of file time
  // with one worker, 56 s of wall time with two; the whole suite ran in about 92 s with two).
  maxWorkers: 2,
  // A bound, not a timing assertion: e2e tests start node processes (a toolpin child costs about
  // 1 s of CPU), which on a loaded 2-core machine went past jest's default of 5 s. (Jest reads this
  // option here, for every project, not per project.)
  testTimeout: 20_000,
  projects: [
    {
      ...esm,
      displayName: 'digest',
      rootDir: 'packages/digest',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      transform,
    },
    {
      ...esm,
      displayName: 'gateway',
      rootDir: 'packages/gateway',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      transform,
    },
    {
      ...esm,
      displayName: 'e2e',
      rootDir: 'test',
      testMatch: ['<rootDir>/**/*.test.ts'],
      transform,
    },
  ],
};
