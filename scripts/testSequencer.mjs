// The order jest starts test files in: the longest first, so that the two workers end together.
// Jest's own sequencer knows a file's duration only from its cache of earlier runs; CI runs on a
// fresh machine with no cache, where jest falls back to file size, which puts a small file that
// packs and installs toolpin (20 s) last. So a file jest has no duration for takes the one recorded
// in test/fileTimings.json (refresh it with scripts/recordTimings.mjs; a stale entry changes only
// the order, never a result).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Sequencer from '@jest/test-sequencer';

const root = fileURLToPath(new URL('..', import.meta.url));
const recorded = JSON.parse(readFileSync(new URL('../test/fileTimings.json', import.meta.url), 'utf8'));

export default class RecordedTimesFirst extends Sequencer {
  time(test) {
    return super.time(test) ?? recorded[relative(root, test.path)];
  }
}
