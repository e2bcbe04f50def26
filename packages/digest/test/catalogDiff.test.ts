import {
  changedPointers,
  diffCatalogs,
  digestCatalog,
  restrictTool,
  type CatalogSide,
} from '../src/index.js';
import { catalogTools } from './fixtures.js';

function side(file: string, withDefinitions = true): CatalogSide {
  const tools = catalogTools(file);
  const result = digestCatalog(tools);
  if (!withDefinitions) return { tools: result.entries };
  const definitions = Object.fromEntries(
    result.tools.map((entry, i) => [entry.key, restrictTool(tools[i] ?? {})]),
  );
  return { tools: result.entries, definitions };
}

describe('diffCatalogs', () => {
  it('names the drifted tool, its changed member and JSON Pointer (deepwiki vs deepwiki-drifted)', () => {
    const diff = diffCatalogs(side('deepwiki-tools-list.json'), side('deepwiki-tools-list-drifted.json'));
    expect(diff.equal).toBe(false);
    expect(diff.wrongSubject).toBe(false);
    expect(diff.changed).toEqual([
      {
        key: 'tool:ask_wiki_question',
        name: 'ask_wiki_question',
        pinned: 'sha256:7b433df44e34a9356d6481fc370283840a598c47b879d0f663952e91d8b3e729',
        observed: 'sha256:a7da4da5eca7b1d7f329a555a7dd748587124dadd75056f375b306129215b4d6',
        members: ['description'],
        paths: ['/description'],
      },
    ]);
    expect(diff.unchanged).toEqual(['tool:read_wiki_contents', 'tool:read_wiki_structure']);
    expect(diff.added).toEqual([]);
    expect(diff.removed).toEqual([]);
  });

  it('reports only digests when the sides hold no definitions', () => {
    const diff = diffCatalogs(
      side('deepwiki-tools-list.json', false),
      side('deepwiki-tools-list-drifted.json'),
    );
    expect(diff.changed[0]).toEqual({
      key: 'tool:ask_wiki_question',
      name: 'ask_wiki_question',
      pinned: 'sha256:7b433df44e34a9356d6481fc370283840a598c47b879d0f663952e91d8b3e729',
      observed: 'sha256:a7da4da5eca7b1d7f329a555a7dd748587124dadd75056f375b306129215b4d6',
    });
  });

  it('flags another server catalog as the wrong subject (deepwiki vs cloudflare-docs)', () => {
    const diff = diffCatalogs(side('deepwiki-tools-list.json'), side('cloudflare-docs-tools-list.json'));
    expect(diff.wrongSubject).toBe(true);
    expect(diff.equal).toBe(false);
    expect(diff.added.map((entry) => entry.key)).toEqual([
      'tool:migrate_pages_to_workers_guide',
      'tool:search_cloudflare_documentation',
    ]);
    expect(diff.removed).toHaveLength(3);
    expect(diff.changed).toEqual([]);
  });

  it('is equal for the same catalog', () => {
    const diff = diffCatalogs(side('deepwiki-tools-list.json'), side('deepwiki-tools-list.json'));
    expect(diff).toMatchObject({ equal: true, wrongSubject: false, changed: [], added: [], removed: [] });
  });

  it('reports added and removed tools without calling it the wrong subject', () => {
    const diff = diffCatalogs(
      { tools: { 'tool:a': 'sha256:1', 'tool:b': 'sha256:2' } },
      { tools: { 'tool:a': 'sha256:1', 'tool:c': 'sha256:3' } },
    );
    expect(diff).toEqual({
      equal: false,
      wrongSubject: false,
      changed: [],
      added: [{ key: 'tool:c', digest: 'sha256:3' }],
      removed: [{ key: 'tool:b', digest: 'sha256:2' }],
      unchanged: ['tool:a'],
    });
  });

  it('points at nested schema paths, added properties and removed members', () => {
    const before = { name: 'q', title: 'T', inputSchema: { properties: { q: { type: 'string' } } } };
    const after = {
      name: 'q',
      inputSchema: { properties: { q: { type: 'number' }, r: { type: 'string' } } },
    };
    const diff = diffCatalogs(
      { tools: { 'tool:q': 'sha256:1' }, definitions: { 'tool:q': before } },
      { tools: { 'tool:q': 'sha256:2' }, definitions: { 'tool:q': after } },
    );
    expect(diff.changed[0]?.members).toEqual(['title', 'inputSchema']);
    expect(diff.changed[0]?.paths).toEqual([
      '/title',
      '/inputSchema/properties/q/type',
      '/inputSchema/properties/r',
    ]);
  });
});

describe('changedPointers', () => {
  it('points at the deepest differences under a base, escaping "/" and "~" (RFC 6901)', () => {
    expect(
      changedPointers(
        { 'ui/resourceUri': 'ui://a', 'a~b': [1, 2], same: { x: 1 } },
        { 'ui/resourceUri': 'ui://b', 'a~b': [1, 3], same: { x: 1 } },
        '/_meta',
      ),
    ).toEqual(['/_meta/a~0b/1', '/_meta/ui~1resourceUri']);
  });

  it('is empty for equal values (by canonical form) and the whole value when one side is absent', () => {
    expect(changedPointers({ a: 1, b: 2 }, { b: 2, a: 1.0 })).toEqual([]);
    expect(changedPointers([{ src: 'x' }], undefined, '/icons')).toEqual(['/icons']);
  });
});
