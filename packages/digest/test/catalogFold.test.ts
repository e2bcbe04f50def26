import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { AGENTAVOW_PROFILE, TRACE_PROFILE, digestCatalog, foldCatalog } from '../src/index.js';

function sha256(text: string): string {
  return 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');
}

function fakeDigest(n: number): string {
  return sha256(`tool ${n}`);
}

describe('foldCatalog', () => {
  it('hashes sorted key=digest lines joined by \\n with no trailing newline', () => {
    const fold = foldCatalog([
      { key: 'tool:b', digest: fakeDigest(2) },
      { key: 'tool:a', digest: fakeDigest(1) },
    ]);
    expect(fold.digest).toBe(sha256(`tool:a=${fakeDigest(1)}\ntool:b=${fakeDigest(2)}`));
    expect(Object.keys(fold.entries)).toEqual(['tool:a', 'tool:b']);
  });

  it('folds same-key tools into one entry over "<profile>.duplicates\\n" and the sorted digests', () => {
    const [x, y] = [fakeDigest(9), fakeDigest(3)].sort() as [string, string];
    for (const profile of [TRACE_PROFILE, AGENTAVOW_PROFILE]) {
      const fold = foldCatalog(
        [
          { key: 'tool:dup', digest: y },
          { key: 'tool:one', digest: fakeDigest(1) },
          { key: 'tool:dup', digest: x },
        ],
        { profile },
      );
      const duplicate = sha256(`${profile}.duplicates\n${x}\n${y}`);
      expect(fold.entries).toEqual({ 'tool:dup': duplicate, 'tool:one': fakeDigest(1) });
      expect(fold.digest).toBe(sha256(`tool:dup=${duplicate}\ntool:one=${fakeDigest(1)}`));
    }
  });

  it('folds two tools with the same name into one duplicates entry', () => {
    const result = digestCatalog([
      { name: 'same', description: 'first' },
      { name: 'same', description: 'second' },
    ]);
    const digests = result.tools.map((tool) => tool.digest).sort();
    expect(result.entries).toEqual({
      'tool:same': sha256(`${TRACE_PROFILE}.duplicates\n${digests.join('\n')}`),
    });
  });

  it('keeps 500 sorted keys and folds the rest into tools:overflow (501 tools -> 500 + 1 entries)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 501, max: 620 }), (count) => {
        const tools = Array.from({ length: count }, (_, n) => ({
          key: `tool:t${String(n).padStart(4, '0')}`,
          digest: fakeDigest(n),
        })).reverse();
        const fold = foldCatalog(tools);
        const sorted = [...tools].sort((a, b) => (a.key < b.key ? -1 : 1));
        const kept = sorted.slice(0, 500).map(({ key, digest }) => `${key}=${digest}`);
        const rest = sorted.slice(500).map(({ key, digest }) => `${key}=${digest}`);
        const overflow = sha256(`${TRACE_PROFILE}.overflow\n${rest.join('\n')}`);
        expect(Object.keys(fold.entries)).toHaveLength(501);
        expect(fold.entries['tools:overflow']).toBe(overflow);
        expect(fold.digest).toBe(sha256([...kept, `tools:overflow=${overflow}`].join('\n')));
        // The per-tool map the fold read still names every tool, and no overflow entry.
        expect(Object.keys(fold.keyed)).toHaveLength(count);
        expect(fold.keyed).toEqual(Object.fromEntries(sorted.map(({ key, digest }) => [key, digest])));
      }),
      { numRuns: 5 },
    );
  });

  it('keys duplicates once in the per-tool map, with the same entry as the fold', () => {
    const tools = Array.from({ length: 600 }, (_, n) => ({
      key: `tool:t${String(n).padStart(3, '0')}`,
      digest: fakeDigest(n),
    }));
    tools.push({ key: 'tool:t599', digest: fakeDigest(1000) });
    const fold = foldCatalog(tools);
    expect(Object.keys(fold.keyed)).toHaveLength(600);
    expect(fold.keyed['tool:t000']).toBe(fold.entries['tool:t000']);
    expect(fold.keyed['tool:t599']).toBe(
      sha256(`${TRACE_PROFILE}.duplicates\n${[fakeDigest(599), fakeDigest(1000)].sort().join('\n')}`),
    );
  });

  it('applies the overflow rule after folding duplicates', () => {
    const tools = Array.from({ length: 500 }, (_, n) => ({
      key: `tool:t${String(n).padStart(3, '0')}`,
      digest: fakeDigest(n),
    }));
    tools.push({ key: 'tool:t000', digest: fakeDigest(1000) });
    expect(Object.keys(foldCatalog(tools).entries)).toHaveLength(500);
    expect(foldCatalog(tools).entries['tools:overflow']).toBeUndefined();
  });

  it('does not fold exactly 500 entries', () => {
    const tools = Array.from({ length: 500 }, (_, n) => ({ key: `tool:${n}`, digest: fakeDigest(n) }));
    expect(foldCatalog(tools).entries['tools:overflow']).toBeUndefined();
  });
});
