// Writes test/fileTimings.json (milliseconds per test file, the order scripts/testSequencer.mjs
// starts files in on a machine with no jest cache) from a jest JSON report:
//   npx jest --json --outputFile=/tmp/jest-report.json && node scripts/recordTimings.mjs /tmp/jest-report.json
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const report = process.argv[2];
if (!report) {
  process.stderr.write('usage: node scripts/recordTimings.mjs <jest --json report>\n');
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const timings = Object.fromEntries(
  testResults
    .map((result) => [relative(root, result.name), Math.round(result.endTime - result.startTime)])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(new URL('../test/fileTimings.json', import.meta.url), `${JSON.stringify(timings, null, 2)}\n`);
process.stdout.write(`recorded ${Object.keys(timings).length} files in test/fileTimings.json\n`);
