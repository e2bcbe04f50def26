import type { OnDriftSetting, PinnedArtifact } from '../../src/config/types.js';
import {
  judgeStatedServers,
  recordableServer,
  SERVER_INFO_META_KEY,
  statedServers,
  type StatedArtifactPin,
} from '../../src/policy/statedArtifact.js';

const PINNED: PinnedArtifact = { kind: 'server', name: 'acme', version: '1.0.0' };

function pinOf(
  onDrift: OnDriftSetting = 'filter',
  mode: 'enforce' | 'monitor' = 'enforce',
  artifact: PinnedArtifact | null = PINNED,
): StatedArtifactPin {
  return { mode, onDrift, pin: artifact === null ? {} : { artifact } };
}

const said = (serverInfo: unknown): ReturnType<typeof statedServers> => statedServers({ serverInfo });

describe('statedServers', () => {
  it('reads initialize serverInfo and the 2026-07-28 _meta statement, each one present', () => {
    const result = {
      serverInfo: { name: 'acme', version: '1.0.0', title: 'Acme' },
      _meta: { [SERVER_INFO_META_KEY]: { name: 'acme', version: '2.0.0' } },
    };
    expect(statedServers(result)).toEqual([
      { stated: true, artifact: { kind: 'server', name: 'acme', version: '1.0.0' }, malformed: false },
      { stated: true, artifact: { kind: 'server', name: 'acme', version: '2.0.0' }, malformed: false },
    ]);
    expect(statedServers({ capabilities: {} })).toEqual([{ stated: false }]);
  });

  it('marks values that are not strings, and cuts one longer than a pin may hold', () => {
    expect(said({ name: 'acme', version: 1 })[0]).toMatchObject({
      artifact: { version: '(not a string) 1' },
      malformed: true,
    });
    expect(said('acme')[0]).toMatchObject({ artifact: { name: '(not an object) "acme"' }, malformed: true });
    const long = said({ name: 'acme', version: 'x'.repeat(600) })[0];
    expect(long).toMatchObject({ malformed: true });
    expect(long?.stated === true && long.artifact.version).toHaveLength(513);
  });
});

describe('judgeStatedServers', () => {
  it('judges nothing without a pinned server artifact', () => {
    expect(judgeStatedServers(pinOf('filter', 'enforce', null), said(PINNED))).toBeUndefined();
    const npm: PinnedArtifact = { kind: 'npm', package: 'p', version: '1.0.0', integrity: 'sha512-AA==' };
    expect(judgeStatedServers(pinOf('filter', 'enforce', npm), said(PINNED))).toBeUndefined();
  });

  it('verifies exactly the pinned name and version, whatever else the serverInfo holds', () => {
    expect(judgeStatedServers(pinOf(), said({ name: 'acme', version: '1.0.0', icons: [] }))).toEqual({
      kind: 'verified',
      artifact: PINNED,
    });
  });

  it.each([
    ['filter', 'enforce', 'flagged'],
    [{ high: 'block-server', low: 'flag' }, 'enforce', 'flagged'],
    [{ high: 'filter', low: 'block-server' }, 'enforce', 'refused'],
    ['block-server', 'enforce', 'refused'],
    ['block-server', 'monitor', 'flagged'],
  ] as const)('onDrift %j in %s mode: another version is low drift, %s', (onDrift, mode, action) => {
    expect(judgeStatedServers(pinOf(onDrift, mode), said({ name: 'acme', version: '1.1.0' }))).toMatchObject({
      kind: 'drifted',
      action,
      severity: 'low',
      observed: { version: '1.1.0' },
      summary: 'server "acme" version "1.0.0" -> server "acme" version "1.1.0"',
    });
  });

  it('a missing, malformed or second disagreeing statement is drift', () => {
    expect(judgeStatedServers(pinOf(), [{ stated: false }])).toMatchObject({
      kind: 'drifted',
      observed: null,
      summary: 'server "acme" version "1.0.0" -> no serverInfo stated',
    });
    expect(judgeStatedServers(pinOf(), said({ name: 'acme', version: ['1.0.0'] }))).toMatchObject({
      kind: 'drifted',
      malformed: true,
    });
    const two = statedServers({
      serverInfo: { name: 'acme', version: '1.0.0' },
      _meta: { [SERVER_INFO_META_KEY]: { name: 'acme', version: '9' } },
    });
    expect(judgeStatedServers(pinOf(), two)).toMatchObject({ kind: 'drifted', observed: { version: '9' } });
  });
});

describe('recordableServer', () => {
  it('records one well-formed statement, and says why not otherwise', () => {
    expect(recordableServer(said({ name: 'acme', version: '1.0.0' }))).toEqual({ artifact: PINNED });
    expect(recordableServer([{ stated: false }])).toEqual({ problem: 'the server states no serverInfo' });
    expect(recordableServer(said({ name: 'acme' }))).toMatchObject({
      problem: expect.stringContaining('malformed'),
    });
    const two = statedServers({
      serverInfo: { name: 'acme', version: '1.0.0' },
      _meta: { [SERVER_INFO_META_KEY]: { name: 'acme', version: '9' } },
    });
    expect(recordableServer(two)).toEqual({ problem: 'the server states two different serverInfo values' });
  });
});
