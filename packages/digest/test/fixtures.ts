import { readFileSync } from 'node:fs';

/** Reads a JSON file from test/fixtures (copied from the published conformance material). */
export function readFixture(file: string): unknown {
  return JSON.parse(readFileSync(new URL(`./fixtures/${file}`, import.meta.url), 'utf8'));
}

/** The tools array of one pinned catalog fixture. */
export function catalogTools(file: string): Record<string, unknown>[] {
  return (readFixture(file) as { tools: Record<string, unknown>[] }).tools;
}

interface PublishedCatalog {
  file: string;
  tools: Record<string, string>;
  manifest: string;
}

/** The published digests.json. */
export const published = readFixture('digests.json') as {
  label: string;
  catalogs: Record<string, PublishedCatalog>;
  key_encoding: { name: string; key: string }[];
};
