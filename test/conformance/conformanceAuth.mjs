#!/usr/bin/env node
// `pnpm conformance:auth`: every auth/* client scenario of the MCP conformance suite, with the SDK
// v1 and v2 clients, directly, through a toolpin resource-server route (forward, and exchange), and
// with toolpin as the OAuth client (client mode). Prints a summary (scenario x path x SDK) and the table of
// checks; --write puts both into docs/oauth-conformance.md between the markers of a section
// (`--section direct`: `<!-- conformance:auth direct begin -->` ... `end -->`; default `results`).
//
//   node test/conformance/conformanceAuth.mjs [--write [--section <name>]] [--scenario <name>]...
//     [--path <path>]... [--sdk v1|v2]... [--concurrency <n>] [--deadline-minutes <n>]
//
// Bounded: each client run has a timeout inside the suite (30 to 60 s by path, COLUMNS), each
// suite process a hard kill 15 s later (a timed-out run is tried once more), and the whole run a
// deadline (--deadline-minutes, 25) after which pending runs are skipped (reported as such).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  COLUMNS,
  ROOT,
  columnLabel,
  judgedChecks,
  listScenarios,
  runScenario,
} from './conformanceRunner.mjs';

const DOC = join(ROOT, 'docs/oauth-conformance.md');
const marker = (section, end) => `<!-- conformance:auth ${section} ${end ? 'end' : 'begin'} -->`;
const MARK = { SUCCESS: 'pass', FAILURE: '**FAIL**', WARNING: 'warn' };
// Checks the harness itself earns on a path, not the client: for the gateway routes, the harness
// reads the upstream's protected resource metadata to configure the route (the client reads the
// gateway's). Shown as "harness" and left out of the counts.
const HARNESS_CHECKS = {
  'resource-server': new Set(['prm-pathbased-requested']),
  exchange: new Set(['prm-pathbased-requested']),
};

const { values } = parseArgs({
  options: {
    write: { type: 'boolean', default: false },
    section: { type: 'string', default: 'results' },
    scenario: { type: 'string', multiple: true },
    path: { type: 'string', multiple: true },
    sdk: { type: 'string', multiple: true },
    concurrency: { type: 'string', default: '2' },
    'deadline-minutes': { type: 'string', default: '25' },
  },
});

async function runAll(scenarios, columns) {
  const jobs = scenarios.flatMap((scenario) => columns.map((column) => ({ scenario, column })));
  const results = [];
  const deadline = Date.now() + Number(values['deadline-minutes']) * 60_000;
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      if (Date.now() > deadline) {
        results.push({ ...job, scenario: job.scenario.name, skipped: true, checks: [], passed: false });
        continue;
      }
      let run = await runScenario(job.scenario.name, job.column);
      if (run.timedOut && Date.now() < deadline)
        run = { ...(await runScenario(job.scenario.name, job.column)), retried: true };
      process.stderr.write(
        `${run.passed ? 'pass' : 'FAIL'}  ${job.scenario.name}  ${columnLabel(job.column)}\n`,
      );
      results.push(run);
    }
  };
  await Promise.all(Array.from({ length: Number(values.concurrency) }, worker));
  return results;
}

function find(results, scenario, column) {
  return results.find((r) => r.scenario === scenario && r.column === column);
}

/** The checks of a run that speak for the client (harness-earned ones left out). */
function clientChecks(run) {
  const harness = HARNESS_CHECKS[run.column.path] ?? new Set();
  return [...judgedChecks(run).values()].filter((check) => !harness.has(check.id));
}

function summaryTable(scenarios, columns, results) {
  const lines = [`| scenario | revision | ${columns.map(columnLabel).join(' | ')} |`];
  lines.push(`|---|---|${columns.map(() => '---|').join('')}`);
  for (const scenario of scenarios) {
    const cells = columns.map((column) => {
      const run = find(results, scenario.name, column);
      if (run === undefined || run.skipped) return 'skipped';
      if (run.notApplicable !== undefined) return 'n/a';
      const judged = clientChecks(run);
      const ok = judged.filter((c) => c.status === 'SUCCESS').length;
      return `${run.passed ? 'pass' : '**FAIL**'} ${ok}/${judged.length}`;
    });
    lines.push(`| ${scenario.name} | ${scenario.revisions.join(', ')} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function checksTable(scenarios, columns, results) {
  const lines = [`| scenario | check | ${columns.map(columnLabel).join(' | ')} |`];
  lines.push(`|---|---|${columns.map(() => '---|').join('')}`);
  for (const scenario of scenarios) {
    const runs = columns.map((column) => find(results, scenario.name, column));
    const perColumn = runs.map((run) => (run === undefined ? new Map() : judgedChecks(run)));
    const ids = [...new Set(perColumn.flatMap((checks) => [...checks.keys()]))];
    for (const id of ids) {
      const cells = perColumn.map((checks, index) => {
        const run = runs[index];
        if (run?.notApplicable !== undefined) return 'n/a';
        if (HARNESS_CHECKS[columns[index].path]?.has(id)) return 'harness';
        return MARK[checks.get(id)?.status] ?? '-';
      });
      lines.push(`| ${scenario.name} | ${id} | ${cells.join(' | ')} |`);
    }
    const exits = runs.map((run) =>
      run?.notApplicable !== undefined ? 'n/a' : run?.completed ? 'yes' : 'no',
    );
    lines.push(`| ${scenario.name} | *(client completed)* | ${exits.join(' | ')} |`);
  }
  return lines.join('\n');
}

function failureNotes(results) {
  const notes = [];
  for (const run of results) {
    const where = `${run.scenario}, ${columnLabel(run.column)}`;
    if (run.skipped) notes.push(`- ${where}: skipped (the run's deadline had passed)`);
    if (run.retried)
      notes.push(`- ${where}: timed out once on a loaded machine; the result is the second run's`);
    if (run.timedOut) notes.push(`- ${where}: timed out`);
    if (run.skipped) continue;
    if (run.notApplicable !== undefined) {
      notes.push(`- ${where}: not applicable: ${run.notApplicable}`);
      continue;
    }
    if (!run.completed && run.clientError !== undefined)
      notes.push(`- ${where}: the client stopped: ${run.clientError}`);
    for (const check of clientChecks(run)) {
      if (check.status === 'SUCCESS') continue;
      const why = check.errorMessage ?? check.description;
      notes.push(`- ${where}: \`${check.id}\` (${check.status}): ${why}`);
    }
  }
  return notes.join('\n');
}

/** Replaces what stands between the `name` section's markers of docs/oauth-conformance.md. */
async function writeDoc(name, section) {
  const doc = await readFile(DOC, 'utf8');
  const [BEGIN, END] = [marker(name, false), marker(name, true)];
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${DOC}: the markers of section "${name}" are missing`);
  await writeFile(DOC, `${doc.slice(0, begin + BEGIN.length)}\n\n${section}\n\n${doc.slice(end)}`);
}

const all = await listScenarios('auth/');
const scenarios = values.scenario === undefined ? all : all.filter((s) => values.scenario.includes(s.name));
const columns = COLUMNS.filter(
  (c) => (values.path?.includes(c.path) ?? true) && (values.sdk?.includes(c.sdk) ?? true),
);
const started = Date.now();
const results = await runAll(scenarios, columns);
const section = [
  `Conformance suite @modelcontextprotocol/conformance 0.1.16, ${scenarios.length} scenarios, ` +
    `${results.length} runs in ${Math.round((Date.now() - started) / 1000)} s, ${new Date().toISOString().slice(0, 16)}Z.`,
  '#### Scenarios (suite verdict, judged checks passed)',
  summaryTable(scenarios, columns, results),
  '#### Checks',
  checksTable(scenarios, columns, results),
  '#### Checks that did not pass',
  failureNotes(results) || 'none',
].join('\n\n');
console.log(section);
if (values.write) await writeDoc(values.section, section);
