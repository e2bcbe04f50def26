// Compares digestCatalog with the reference path (canonicalize package + SHA-256 per tool +
// the same fold) on a deterministic 500-tool catalog, and checks both give identical bytes.
// Run: pnpm bench:digest (tsx). Bounded by a time budget per side.
import { createHash } from 'node:crypto';
import { strict as assert } from 'node:assert';
import canonicalize from 'canonicalize';
import {
  TRACE_PROFILE,
  canonicalizeJson,
  digestCatalog,
  encodeToolKey,
  foldCatalog,
  restrictTool,
} from '../src/index.js';

const TOOLS = 500;
const WARMUP_MS = 1500;
const MEASURE_MS = 8000;
const ROUND = 5;

/** A small deterministic PRNG (mulberry32), so every run digests the same catalog. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'repository file search query result page token limit offset branch commit issue pull request ' +
  'label owner path content encoding format timeout retry cache index document section résumé naïve'
).split(' ');

function sentence(next: () => number, words: number): string {
  let out = '';
  for (let i = 0; i < words; i++) out += (i ? ' ' : '') + WORDS[Math.floor(next() * WORDS.length)];
  return out + '.';
}

/** One realistic tool of about 1.5 KB: description, a JSON Schema with nested properties, annotations, _meta. */
function makeTool(i: number, next: () => number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const count = 4 + Math.floor(next() * 3);
  for (let p = 0; p < count; p++) {
    const name = `${WORDS[Math.floor(next() * WORDS.length)]}_${p}`;
    properties[name] =
      p % 3 === 0
        ? {
            type: 'integer',
            minimum: 0,
            maximum: 1000,
            default: Math.floor(next() * 100),
            description: sentence(next, 8),
          }
        : p % 3 === 1
          ? {
              type: 'array',
              items: { type: 'string', enum: ['asc', 'desc', 'auto'] },
              description: sentence(next, 6),
            }
          : {
              anyOf: [{ type: 'string' }, { type: 'null' }],
              description: sentence(next, 10),
              title: `Field ${p}`,
            };
    if (p % 2 === 0) required.push(name);
  }
  return {
    name: `tool_${i}_${WORDS[i % WORDS.length]}`,
    title: `Tool ${i}`,
    description: sentence(next, 40) + '\n' + sentence(next, 20),
    inputSchema: {
      type: 'object',
      properties,
      required,
      additionalProperties: false,
      $schema: 'https://json-schema.org/draft/2020-12/schema',
    },
    annotations: { readOnlyHint: next() < 0.5, openWorldHint: true, idempotentHint: false },
    _meta: { 'vendor/trace': i, ratio: next() },
  };
}

function referenceCatalog(tools: readonly Record<string, unknown>[]): {
  catalog: string;
  entries: Record<string, string>;
} {
  const pairs = tools.map((tool) => {
    const preimage = canonicalize({ profile: TRACE_PROFILE, tool: restrictTool(tool) }) as string;
    return {
      key: encodeToolKey(tool.name),
      digest: 'sha256:' + createHash('sha256').update(preimage).digest('hex'),
    };
  });
  const fold = foldCatalog(pairs);
  return { catalog: fold.digest, entries: fold.entries };
}

/**
 * Milliseconds per catalog for both sides, measured in alternating rounds so that load from
 * other processes on the machine hits both sides alike; the median round of each side is reported.
 */
function measure(ours: () => unknown, reference: () => unknown): { oursMs: number; referenceMs: number } {
  const warmUntil = performance.now() + WARMUP_MS;
  while (performance.now() < warmUntil) {
    ours();
    reference();
  }
  const oursRounds: number[] = [];
  const referenceRounds: number[] = [];
  const until = performance.now() + MEASURE_MS;
  while (performance.now() < until) {
    oursRounds.push(timeRound(ours));
    referenceRounds.push(timeRound(reference));
  }
  return { oursMs: median(oursRounds), referenceMs: median(referenceRounds) };
}

function timeRound(run: () => unknown): number {
  const start = performance.now();
  for (let i = 0; i < ROUND; i++) run();
  return (performance.now() - start) / ROUND;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const next = random(20261001);
const tools = Array.from({ length: TOOLS }, (_, i) => makeTool(i, next));
const averageBytes = tools.reduce((sum, tool) => sum + JSON.stringify(tool).length, 0) / TOOLS;

// Byte identity first: every preimage, then the whole result.
for (const tool of tools) {
  const wrapped = { profile: TRACE_PROFILE, tool: restrictTool(tool) };
  assert.equal(canonicalizeJson(wrapped), canonicalize(wrapped));
}
const ours = digestCatalog(tools);
const reference = referenceCatalog(tools);
assert.equal(ours.catalog, reference.catalog);
assert.deepEqual(ours.entries, reference.entries);

const { oursMs, referenceMs } = measure(
  () => digestCatalog(tools),
  () => referenceCatalog(tools),
);
const ratio = referenceMs / oursMs;
console.log(`catalog: ${TOOLS} tools, ${averageBytes.toFixed(0)} bytes/tool average, digest ${ours.catalog}`);
console.log(`digestCatalog (@toolpin/digest):       ${oursMs.toFixed(3)} ms/catalog`);
console.log(`canonicalize + SHA-256 + same fold:    ${referenceMs.toFixed(3)} ms/catalog`);
console.log(`speed-up: ${ratio.toFixed(2)}x (target >= 2x); outputs byte-identical`);
