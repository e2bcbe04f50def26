import { detectRenames } from '../../src/explain/detectRenames.js';

const schema = { type: 'object', properties: { q: { type: 'string' } } };

describe('detectRenames', () => {
  it('pairs a removed and an added key whose definitions differ only by name', () => {
    const removed = [
      { key: 'tool:search', definition: { name: 'search', description: 'Search.', inputSchema: schema } },
    ];
    const added = [
      { key: 'tool:find', definition: { name: 'find', description: 'Search.', inputSchema: schema } },
    ];
    expect(detectRenames(removed, added)).toEqual([{ from: 'tool:search', to: 'tool:find' }]);
  });

  it('does not pair definitions that differ in any other member', () => {
    const removed = [{ key: 'tool:search', definition: { name: 'search', description: 'Search.' } }];
    const added = [{ key: 'tool:find', definition: { name: 'find', description: 'Search everything.' } }];
    expect(detectRenames(removed, added)).toEqual([]);
  });

  it('does not pair keys whose definition is unknown on either side', () => {
    const added = [{ key: 'tool:find', definition: { name: 'find' } }];
    expect(detectRenames([{ key: 'tool:search' }], added)).toEqual([]);
    expect(
      detectRenames([{ key: 'tool:search', definition: { name: 'search' } }], [{ key: 'tool:find' }]),
    ).toEqual([]);
  });

  it('uses each added key once, in key order', () => {
    const same = { description: 'Same.' };
    const removed = [
      { key: 'tool:b', definition: { name: 'b', ...same } },
      { key: 'tool:a', definition: { name: 'a', ...same } },
    ];
    const added = [{ key: 'tool:c', definition: { name: 'c', ...same } }];
    expect(detectRenames(removed, added)).toEqual([{ from: 'tool:a', to: 'tool:c' }]);
  });
});
