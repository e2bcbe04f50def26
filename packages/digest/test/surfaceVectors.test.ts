import { createHash } from 'node:crypto';
import {
  INSTRUCTIONS_PROFILE,
  PROMPTS_OVERFLOW_KEY,
  PROMPT_PROFILE,
  TEMPLATE_PROFILE,
  digestInstructions,
  digestPrompt,
  digestPromptCatalog,
  digestTemplate,
  digestTemplateCatalog,
  encodePromptKey,
  encodeTemplateKey,
  restrictPrompt,
} from '../src/index.js';
import { readFixture } from './fixtures.js';

// A second, deliberately naive implementation of the profiles: its own RFC 8785 writer (enough for
// the strings, integers, booleans and objects of these fixtures), its own key encoding and fold,
// and node:crypto. Neither side imports the other's code.
function naiveCanonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return '[' + value.map(naiveCanonical).join(',') + ']';
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((key) => record[key] !== undefined);
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return '{' + keys.map((key) => JSON.stringify(key) + ':' + naiveCanonical(record[key])).join(',') + '}';
}

function naiveSha(text: string): string {
  return 'sha256:' + createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
}

function naivePick(item: Record<string, unknown>, members: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const member of members) if (item[member] != null) out[member] = item[member];
  return out;
}

function naiveKey(prefix: string, name: string): string {
  let body = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const literal = byte > 0x20 && byte < 0x7f && byte !== 0x25 && byte !== 0x3d;
    body += literal ? String.fromCharCode(byte) : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return `${prefix}:${body}`;
}

function naiveFold(entries: Record<string, string>): string {
  const keys = Object.keys(entries).sort();
  return naiveSha(keys.map((key) => `${key}=${entries[key]}`).join('\n'));
}

type Item = Record<string, unknown>;

function naivePromptDigest(prompt: Item): string {
  const restricted = naivePick(prompt, ['name', 'title', 'description', 'arguments']);
  if (Array.isArray(restricted.arguments))
    restricted.arguments = (restricted.arguments as Item[]).map((argument) =>
      naivePick(argument, ['name', 'title', 'description', 'required']),
    );
  return naiveSha(naiveCanonical({ profile: PROMPT_PROFILE, prompt: restricted }));
}

function naiveTemplateDigest(template: Item): string {
  const restricted = naivePick(template, ['uriTemplate', 'name', 'title', 'description', 'mimeType']);
  return naiveSha(naiveCanonical({ profile: TEMPLATE_PROFILE, resourceTemplate: restricted }));
}

interface Vector {
  file: string;
  label: string;
  items: Record<string, string>;
  catalog: string;
}
const vectors = readFixture('surface-digests.json') as Record<string, Vector> & {
  instructions: { file: string; label: string; digests: Record<string, string> };
};

const listings = [
  { vector: 'prompts', member: 'prompts', kind: 'prompt' },
  { vector: 'prompts-drifted', member: 'prompts', kind: 'prompt' },
  { vector: 'resourceTemplates', member: 'resourceTemplates', kind: 'template' },
] as const;

function itemsOf(file: string, member: string): Item[] {
  return (readFixture(file) as Record<string, Item[]>)[member] as Item[];
}

describe('golden vectors of the prompt, resource template and instructions profiles', () => {
  it('carries the documented labels', () => {
    expect(vectors.prompts?.label).toBe(PROMPT_PROFILE);
    expect(vectors.resourceTemplates?.label).toBe(TEMPLATE_PROFILE);
    expect(vectors.instructions.label).toBe(INSTRUCTIONS_PROFILE);
    expect(new Set([PROMPT_PROFILE, TEMPLATE_PROFILE, INSTRUCTIONS_PROFILE]).size).toBe(3);
  });

  it.each(listings)(
    'reproduces the $vector catalog with the package and the naive implementation',
    (listing) => {
      const vector = vectors[listing.vector] as Vector;
      const items = itemsOf(vector.file, listing.member);
      const result = listing.kind === 'prompt' ? digestPromptCatalog(items) : digestTemplateCatalog(items);
      expect(result.entries).toEqual(vector.items);
      expect(result.catalog).toBe(vector.catalog);
      expect(result.profile).toBe(vector.label);

      const naive: Record<string, string> = {};
      for (const item of items) {
        const key =
          listing.kind === 'prompt'
            ? naiveKey('prompt', item.name as string)
            : naiveKey('template', item.uriTemplate as string);
        naive[key] = listing.kind === 'prompt' ? naivePromptDigest(item) : naiveTemplateDigest(item);
        expect(
          listing.kind === 'prompt' ? encodePromptKey(item.name) : encodeTemplateKey(item.uriTemplate),
        ).toBe(key);
        expect(listing.kind === 'prompt' ? digestPrompt(item) : digestTemplate(item)).toBe(naive[key]);
      }
      expect(naive).toEqual(vector.items);
      expect(naiveFold(naive)).toBe(vector.catalog);
    },
  );

  it.each(Object.keys(vectors.instructions.digests))('reproduces the instructions case %s', (name) => {
    const cases = (
      readFixture(vectors.instructions.file) as { cases: { case: string; instructions?: string }[] }
    ).cases;
    const found = cases.find((candidate) => candidate.case === name);
    expect(found).toBeDefined();
    const expected = vectors.instructions.digests[name];
    expect(digestInstructions(found?.instructions)).toBe(expected);
    const preimage =
      found?.instructions === undefined
        ? { profile: INSTRUCTIONS_PROFILE }
        : { profile: INSTRUCTIONS_PROFILE, instructions: found.instructions };
    expect(naiveSha(naiveCanonical(preimage))).toBe(expected);
  });

  it('tells absent instructions from empty ones, and null from absent', () => {
    expect(digestInstructions(undefined)).not.toBe(digestInstructions(''));
    expect(digestInstructions(null)).toBe(digestInstructions(undefined));
  });

  it('drops members outside the profile: _meta, icons, annotations, unknown argument members', () => {
    const [review] = itemsOf('prompts-list.json', 'prompts');
    expect(restrictPrompt(review as Item)).toEqual({
      name: 'code_review',
      title: 'Request Code Review',
      description: 'Asks the model to review code quality and suggest improvements.',
      arguments: [
        { name: 'code', title: 'Code', description: 'The code to review', required: true },
        { name: 'language', description: 'Programming language', required: false },
      ],
    });
    const template = { uriTemplate: 'a://{x}', name: 'a', annotations: { priority: 1 }, icons: [] };
    expect(digestTemplate(template)).toBe(digestTemplate({ uriTemplate: 'a://{x}', name: 'a' }));
  });

  it('differs from a prompt with the same members hashed under the tool label', () => {
    const prompt = { name: 'greet', description: 'Say hi' };
    expect(digestPrompt(prompt)).not.toBe(naiveSha(naiveCanonical({ profile: TEMPLATE_PROFILE, prompt })));
    expect(digestPrompt(prompt)).toBe(naiveSha(naiveCanonical({ profile: PROMPT_PROFILE, prompt })));
  });
});

describe('the fold of a surface', () => {
  it('folds prompts beyond the first 500 keys into prompts:overflow', () => {
    const prompts = Array.from({ length: 502 }, (_, i) => ({ name: `p${String(i).padStart(3, '0')}` }));
    const result = digestPromptCatalog(prompts);
    expect(Object.keys(result.entries)).toHaveLength(501);
    expect(Object.hasOwn(result.entries, PROMPTS_OVERFLOW_KEY)).toBe(true);
    const rest = prompts.slice(500).map((prompt) => `prompt:${prompt.name}=${naivePromptDigest(prompt)}`);
    expect(result.entries[PROMPTS_OVERFLOW_KEY]).toBe(
      naiveSha(`${PROMPT_PROFILE}.overflow\n` + rest.join('\n')),
    );
  });

  it('folds two prompts of the same name into one entry under the prompt label', () => {
    const first = { name: 'twin', description: 'a' };
    const second = { name: 'twin', description: 'b' };
    const result = digestPromptCatalog([first, second]);
    const digests = [naivePromptDigest(first), naivePromptDigest(second)].sort();
    expect(result.entries).toEqual({
      'prompt:twin': naiveSha(`${PROMPT_PROFILE}.duplicates\n` + digests.join('\n')),
    });
  });

  it('refuses a listing that is not an array, and names a bad item by index', () => {
    expect(() => digestTemplateCatalog({})).toThrow(
      expect.objectContaining({ code: 'DIGEST_ITEMS_NOT_ARRAY' }),
    );
    expect(() => digestPromptCatalog([{ name: 'ok' }, 7])).toThrow(
      expect.objectContaining({
        code: 'DIGEST_ITEM_NOT_OBJECT',
        data: expect.objectContaining({ index: 1 }),
      }),
    );
    expect(() => digestPrompt({ name: 'n', description: Number.NaN })).toThrow(/prompt "n" has no digest/);
  });

  it('keys an unnamed item as <prefix>:unnamed', () => {
    expect(encodePromptKey('')).toBe('prompt:unnamed');
    expect(encodeTemplateKey(undefined)).toBe('template:unnamed');
  });
});
