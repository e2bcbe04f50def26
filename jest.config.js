import { fileURLToPath } from 'node:url';

// One jest run over every package and the end-to-end scenarios in test/, on jest-light-runner:
// each test file runs in a plain Node.js worker thread that keeps its loaded modules from one file
// to the next (jest's own runner evaluates every module again in a fresh vm context per file, about
// 2 s of CPU per file here). scripts/testSetup.mjs registers tsx's loader (types stripped, nothing
// type-checked: `tsc -b` checks the packages before jest runs) and bounds every test and hook.
// What this asks of a test file: leave the process as it found it (environment variables, global
// listeners), since the next file in that thread sees it. See docs/architecture.md "The suite".
/** @type {import('jest').Config} */
export default {
  // Two workers on the 2-core machines the suite runs on: most tests wait on sockets and child
  // processes, so a second worker overlaps those waits.
  maxWorkers: 2,
  // The longest files first, also on a machine with no jest cache (CI): scripts/testSequencer.mjs.
  testSequencer: fileURLToPath(new URL('./scripts/testSequencer.mjs', import.meta.url)),
  // A bound, not a timing assertion, applied by scripts/testSetup.mjs (TEST_TIMEOUT_MS there):
  // e2e tests start node processes, which on a loaded 2-core machine went past jest's default 5 s.
  testTimeout: 20_000,
  // One project, so one pool of two threads for every file: jest-light-runner keeps a pool per
  // project (two threads each), and each thread loads tsx, jest's globals, the SDKs, express and
  // zod once. Three projects (digest, gateway, e2e) started six threads that each loaded them.
  runner: 'jest-light-runner',
  setupFilesAfterEnv: [fileURLToPath(new URL('./scripts/testSetup.mjs', import.meta.url))],
  testEnvironment: 'node',
  // The unit tests of each package (packages/*/test) and the end-to-end scenarios (test/).
  testMatch: ['<rootDir>/packages/*/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
};
