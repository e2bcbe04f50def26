import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import {
  digestInstructions,
  digestPromptCatalog,
  digestTemplateCatalog,
  restrictPrompt,
  restrictTemplate,
} from '@toolpin/digest';
import { parse } from 'yaml';
import { parsePinFile, parseServerConfig, serializePinFile } from '../../src/config/index.js';
import { rewritePinFile } from '../../src/config/rewritePinFile.js';
import { updatePinDocument } from '../../src/config/updatePinDocument.js';
import { GatewayError } from '../../src/errors.js';
import { tempDir, validPin, writeIn } from './fixtures.js';

const FILE = '/pins/surfaces.yaml';

const PROMPTS = [
  {
    name: 'greet',
    title: 'Greet',
    description: 'Says hello to someone.',
    arguments: [{ name: 'who', description: 'Whom to greet', required: true }],
  },
  { name: 'summarize', description: 'Summarizes a text.' },
];
const TEMPLATES = [
  { uriTemplate: 'file:///{path}', name: 'files', description: 'A project file', mimeType: 'text/plain' },
];
const INSTRUCTIONS = 'Use greet before anything else.';

const prompts = digestPromptCatalog(PROMPTS);
const templates = digestTemplateCatalog(TEMPLATES);

/** A pin of every surface, as plain data: tools of validPin, prompts, templates, instructions. */
function surfacesPin(): Record<string, unknown> & {
  pin: Record<string, unknown>;
  definitions: Record<string, unknown>;
} {
  const base = validPin() as { pin: Record<string, unknown>; definitions: Record<string, unknown> };
  return {
    ...base,
    pin: {
      ...base.pin,
      prompts: { catalog: prompts.catalog, items: { ...prompts.entries } },
      resourceTemplates: { catalog: templates.catalog, items: { ...templates.entries } },
      instructions: digestInstructions(INSTRUCTIONS),
    },
    definitions: {
      ...base.definitions,
      'prompt:greet': structuredClone(PROMPTS[0]),
      'prompt:summarize': structuredClone(PROMPTS[1]),
      'template:file:///{path}': structuredClone(TEMPLATES[0]),
    },
    instructions: INSTRUCTIONS,
  };
}

function rejection(value: unknown): GatewayError {
  try {
    parseServerConfig(value, FILE);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected the pin file to be rejected');
}

function expectInvalid(value: unknown, field: string, expected?: RegExp): void {
  const error = rejection(value);
  expect(error.code).toBe('GW_PIN_FILE_INVALID');
  expect(error.data.field).toBe(field);
  expect(error.message).toContain(FILE);
  if (expected !== undefined) expect(error.message).toMatch(expected);
}

describe('pin files with prompts, resource templates and instructions', () => {
  test('parses every surface: the pin sections, the definitions split by key, the instructions text', () => {
    const server = parseServerConfig(surfacesPin(), FILE);
    expect(server.pin.prompts).toEqual({ catalog: prompts.catalog, items: prompts.entries });
    expect(server.pin.resourceTemplates).toEqual({ catalog: templates.catalog, items: templates.entries });
    expect(server.pin.instructions).toBe(digestInstructions(INSTRUCTIONS));
    expect(server.instructions).toBe(INSTRUCTIONS);
    expect(Object.keys(server.definitions).sort()).toEqual(['tool:add', 'tool:echo']);
    expect(server.promptDefinitions).toEqual({
      'prompt:greet': restrictPrompt(PROMPTS[0] as Record<string, unknown>),
      'prompt:summarize': PROMPTS[1],
    });
    expect(server.templateDefinitions).toEqual({ 'template:file:///{path}': TEMPLATES[0] });
    expect(Object.isFrozen(server.pin.prompts?.items)).toBe(true);
  });

  test('a tools-only pin pins no other surface', () => {
    const server = parseServerConfig(validPin(), FILE);
    expect(server.pin.prompts).toBeUndefined();
    expect(server.pin.resourceTemplates).toBeUndefined();
    expect(server.pin.instructions).toBeUndefined();
    expect(server.instructions).toBeUndefined();
  });

  test('pins the absence of instructions by the digest of none, without a text', () => {
    const value = surfacesPin();
    delete value.instructions;
    value.pin.instructions = digestInstructions(undefined);
    expect(parseServerConfig(value, FILE).pin.instructions).toBe(digestInstructions(undefined));
  });

  test('serializes every surface and reads back the same configuration, in YAML and JSON', () => {
    const server = parseServerConfig(surfacesPin(), FILE);
    for (const format of ['yaml', 'json'] as const) {
      const text = serializePinFile(server, format);
      const again = parsePinFile(text, FILE);
      expect({ ...again, file: FILE }).toEqual(server);
      const document = (format === 'json' ? JSON.parse(text) : parse(text)) as Record<string, unknown>;
      expect(Object.keys(document).slice(-3)).toEqual(['pin', 'definitions', 'instructions']);
      expect(Object.keys(document.pin as object)).toEqual([
        'catalog',
        'tools',
        'prompts',
        'resourceTemplates',
        'instructions',
      ]);
      expect(Object.keys(document.definitions as object)).toEqual([
        'prompt:greet',
        'prompt:summarize',
        'template:file:///{path}',
        'tool:add',
        'tool:echo',
      ]);
    }
  });

  test('refuses a surface whose catalog is not the fold of its items', () => {
    const value = surfacesPin();
    (value.pin.prompts as { catalog: string }).catalog = templates.catalog;
    expectInvalid(value, 'pin.prompts.catalog', /the fold of pin\.prompts\.items/);
  });

  test('refuses a key of the wrong surface in a section, and an unknown definition key', () => {
    const value = surfacesPin();
    (value.pin.prompts as { items: Record<string, string> }).items['tool:x'] = prompts.catalog;
    expect(String(rejection(value).data.field)).toMatch(/^pin\.prompts\.items/);
    const other = surfacesPin();
    other.definitions['resource:x'] = { uri: 'x' };
    expectInvalid(other, 'definitions["resource:x"]', /"prompt:<name>"/);
  });

  test('refuses a prompt definition that does not hash to its pinned digest, or has no pinned key', () => {
    const changed = surfacesPin();
    (changed.definitions['prompt:greet'] as { description: string }).description = 'Says goodbye.';
    expectInvalid(changed, 'definitions["prompt:greet"]', /toolpin\.mcp-prompt-definition\.v1/);
    const unpinned = surfacesPin();
    unpinned.definitions['prompt:other'] = { name: 'other' };
    expectInvalid(unpinned, 'definitions["prompt:other"]', /pin\.prompts\.items/);
    const misnamed = surfacesPin();
    (misnamed.definitions['template:file:///{path}'] as { uriTemplate: string }).uriTemplate = 'file:///{p}';
    expectInvalid(misnamed, 'definitions["template:file:///{path}"].uriTemplate');
  });

  test('refuses a member outside a prompt or template profile in its definition', () => {
    const value = surfacesPin();
    (value.definitions['prompt:greet'] as Record<string, unknown>).icons = [];
    expect(String(rejection(value).data.field)).toMatch(/^definitions\["prompt:greet"\]/);
  });

  test('refuses an instructions text that is not the pinned one, or without pin.instructions', () => {
    const value = surfacesPin();
    value.instructions = 'Something else.';
    expectInvalid(value, 'instructions', /toolpin\.mcp-server-instructions\.v1/);
    const alone = surfacesPin();
    delete alone.pin.instructions;
    expectInvalid(alone, 'instructions', /beside pin\.instructions/);
  });
});

describe('rewriting the surfaces of a pin file', () => {
  test('adds the surfaces to a tools-only YAML pin, keeping its comments, and removes the text on null', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const tools = serializePinFile(parseServerConfig(validPin(), FILE), 'yaml');
      const file = await writeIn(dir, 'demo.yaml', `# reviewed by ops\n${tools}`);
      const server = parseServerConfig(surfacesPin(), FILE);
      const set = {
        'prompt:greet': { ...PROMPTS[0], ignored: true },
        'prompt:summarize': PROMPTS[1] as Record<string, unknown>,
        'template:file:///{path}': restrictTemplate(TEMPLATES[0] as Record<string, unknown>),
      };
      const written = await rewritePinFile(file, {
        pin: server.pin,
        definitions: { set, remove: [] },
        instructions: INSTRUCTIONS,
      });
      expect(written.pin).toEqual(server.pin);
      expect(written.instructions).toBe(INSTRUCTIONS);
      const text = readFileSync(file, 'utf8');
      expect(text.startsWith('# reviewed by ops\n')).toBe(true);
      expect(text).not.toContain('ignored');

      // An update carrying tools only leaves the other surfaces as the file has them.
      const toolsOnly = updatePinDocument(text, 'yaml', {
        pin: { catalog: server.pin.catalog, tools: server.pin.tools },
        definitions: { set: {}, remove: [] },
      });
      expect(parsePinFile(toolsOnly, file).pin).toEqual(server.pin);

      // Pinning the absence of instructions: the digest of none, and the text removed.
      const none = updatePinDocument(text, 'yaml', {
        pin: { ...server.pin, instructions: digestInstructions(undefined) },
        definitions: { set: {}, remove: [] },
        instructions: null,
      });
      const parsed = parsePinFile(none, file);
      expect(parsed.instructions).toBeUndefined();
      expect(parsed.pin.instructions).toBe(digestInstructions(undefined));
      await writeFile(file, serializePinFile(parsed, 'json'));
    } finally {
      await cleanup();
    }
  });

  test('updates one prompt in a JSON pin and the catalog digest follows', () => {
    const server = parseServerConfig(surfacesPin(), FILE);
    const drifted = [{ ...PROMPTS[0], description: 'Says hello twice.' }, PROMPTS[1]];
    const observed = digestPromptCatalog(drifted);
    const text = updatePinDocument(serializePinFile(server, 'json'), 'json', {
      pin: { ...server.pin, prompts: { catalog: observed.catalog, items: observed.entries } },
      definitions: { set: { 'prompt:greet': drifted[0] as Record<string, unknown> }, remove: [] },
    });
    const again = parsePinFile(text, FILE);
    expect(again.pin.prompts?.catalog).toBe(observed.catalog);
    expect(again.promptDefinitions['prompt:greet']?.description).toBe('Says hello twice.');
    expect(again.pin.resourceTemplates).toEqual(server.pin.resourceTemplates);
  });
});
