import fc from 'fast-check';
import { DigestError, digestCatalog, digestTool, encodeToolKey } from '../src/index.js';
import { catalogArbitrary } from './arbitraries.js';

function lines(entries: Record<string, string>): string[] {
  return Object.entries(entries).map(([key, digest]) => `${key}=${digest}`);
}

function thrown(run: () => unknown): DigestError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DigestError);
    return error as DigestError;
  }
  throw new Error('expected a DigestError');
}

describe('digestCatalog', () => {
  it('does not treat reordering the array as drift', () => {
    fc.assert(
      fc.property(
        catalogArbitrary.chain((tools) =>
          fc.tuple(fc.constant(tools), fc.shuffledSubarray(tools, { minLength: tools.length })),
        ),
        ([tools, shuffled]) => {
          expect(digestCatalog(shuffled).catalog).toBe(digestCatalog(tools).catalog);
        },
      ),
    );
  });

  it('changes exactly one fold line when one definition changes', () => {
    fc.assert(
      fc.property(catalogArbitrary, fc.nat(), fc.string(), (tools, pick, suffix) => {
        const index = pick % tools.length;
        const changed = tools.map((tool, i) =>
          i === index ? { ...tool, description: `${String(tool.description ?? '')}!${suffix}` } : tool,
        );
        const before = lines(digestCatalog(tools).entries);
        const after = lines(digestCatalog(changed).entries);
        expect(after.filter((line) => !before.includes(line))).toHaveLength(1);
        expect(after.filter((line) => !before.includes(line))[0]).toMatch(
          `${encodeToolKey(tools[index]?.name)}=`,
        );
        expect(digestCatalog(changed).catalog).not.toBe(digestCatalog(tools).catalog);
      }),
    );
  });

  it('reports every tool in array order with index, name, key and digest', () => {
    const result = digestCatalog([{ name: 'b' }, { description: 'no name' }]);
    expect(result.tools).toEqual([
      { index: 0, name: 'b', key: 'tool:b', digest: digestTool({ name: 'b' }) },
      { index: 1, name: undefined, key: 'tool:unnamed', digest: digestTool({ description: 'no name' }) },
    ]);
    expect(result.profile).toBe('trace.mcp-tool-definition.v1');
  });

  it('rejects tools that are not an array with DIGEST_TOOLS_NOT_ARRAY', () => {
    const error = thrown(() => digestCatalog({ tools: [] }));
    expect(error.code).toBe('DIGEST_TOOLS_NOT_ARRAY');
    expect(error.message).toBe('tools must be a JSON array, got an object');
  });

  it('rejects an entry that is not an object with DIGEST_TOOL_NOT_OBJECT and its index', () => {
    const error = thrown(() => digestCatalog([{ name: 'ok' }, 'nope']));
    expect(error.code).toBe('DIGEST_TOOL_NOT_OBJECT');
    expect(error.data.index).toBe(1);
    expect(error.message).toBe(
      'tool at index 1 has no digest: a tool definition must be a JSON object, got a string',
    );
  });

  it.each([
    ['NaN', { inputSchema: { default: NaN } }, 'NaN is not allowed'],
    ['Infinity', { outputSchema: { maximum: Infinity } }, 'Infinity is not allowed'],
    ['a lone surrogate in a key', { inputSchema: { '\uD800': 1 } }, 'lone surrogate is not allowed'],
    ['a lone surrogate in a value', { description: 'bad \uDC00' }, 'lone surrogate is not allowed'],
  ])('rejects %s with DIGEST_NOT_CANONICAL naming the tool and its index', (_label, members, reason) => {
    const error = thrown(() => digestCatalog([{ name: 'fine' }, { name: 'broken', ...members }]));
    expect(error.code).toBe('DIGEST_NOT_CANONICAL');
    expect(error.data).toEqual({ index: 1, name: 'broken', reason });
    expect(error.message).toBe(`tool "broken" at index 1 has no digest: ${reason}`);
  });
});
