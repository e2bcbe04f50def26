// The benchmark's tool catalogs: deterministic, so every run and every process sees the same
// bytes, and realistic (about 1.5 KB per tool: a long description, a nested inputSchema with
// enums and per-property descriptions, annotations, and on some tools an outputSchema).

/** The tool every `tools/call` of the benchmark calls: it echoes `text`. */
export const ECHO_TOOL = 'echo';

/** A small deterministic PRNG (mulberry32). */
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
  'label owner path content encoding format timeout retry cache index document section customer ' +
  'invoice account region zone cluster deployment metric window range filter sort order field'
).split(' ');

function pick(next: () => number): string {
  return WORDS[Math.floor(next() * WORDS.length)] as string;
}

function sentence(next: () => number, words: number): string {
  let out = '';
  for (let i = 0; i < words; i++) out += (i ? ' ' : '') + pick(next);
  return out.charAt(0).toUpperCase() + out.slice(1) + '.';
}

function property(next: () => number, p: number): Record<string, unknown> {
  switch (p % 4) {
    case 0:
      return { type: 'string', description: sentence(next, 12), minLength: 1, maxLength: 256 };
    case 1:
      return {
        type: 'integer',
        description: sentence(next, 8),
        minimum: 0,
        maximum: 1000,
        default: Math.floor(next() * 100),
      };
    case 2:
      return {
        type: 'string',
        enum: ['asc', 'desc', 'relevance', 'updated'],
        description: sentence(next, 8),
      };
    default:
      return {
        type: 'object',
        description: sentence(next, 6),
        properties: {
          [`${pick(next)}_from`]: { type: 'string', format: 'date-time', description: sentence(next, 5) },
          [`${pick(next)}_to`]: { type: 'string', format: 'date-time', description: sentence(next, 5) },
        },
        additionalProperties: false,
      };
  }
}

function makeTool(i: number, next: () => number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const count = 5 + Math.floor(next() * 2);
  for (let p = 0; p < count; p++) {
    const name = `${pick(next)}_${p}`;
    properties[name] = property(next, p);
    if (p % 2 === 0) required.push(name);
  }
  const tool: Record<string, unknown> = {
    name: `${pick(next)}_${pick(next)}_${i}`,
    title: `${sentence(next, 3).slice(0, -1)} ${i}`,
    description: `${sentence(next, 22)} ${sentence(next, 12)}`,
    inputSchema: { type: 'object', properties, required, additionalProperties: false },
    annotations: {
      readOnlyHint: next() < 0.5,
      destructiveHint: false,
      idempotentHint: next() < 0.5,
      openWorldHint: true,
    },
  };
  if (i % 4 === 0) {
    tool.outputSchema = {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', properties: { id: { type: 'string' }, score: { type: 'number' } } },
        },
        total: { type: 'integer' },
      },
      required: ['items'],
    };
  }
  return tool;
}

/** The echo tool, as realistic as the others (a described schema and annotations). */
function echoTool(): Record<string, unknown> {
  return {
    name: ECHO_TOOL,
    title: 'Echo',
    description:
      'Returns the text it is given, unchanged. Useful to check that the server is reachable and answering.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'The text to return.', maxLength: 4096 } },
      required: ['text'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  };
}

/** A catalog of `size` tools: `echo` first, then generated tools (the same ones for a given size). */
export function makeCatalog(size: number): Record<string, unknown>[] {
  const next = random(20261007);
  const tools = [echoTool()];
  for (let i = 1; i < size; i++) tools.push(makeTool(i, next));
  return tools;
}
