import { npmName, shapeOfLaunch } from '../../src/transports/artifactCommand.js';
import { readImageId, readNpmView, resolveArtifact } from '../../src/transports/resolveArtifact.js';
import { compareArtifacts } from '../../src/policy/artifactDrift.js';

const ID = `sha256:${'ab'.repeat(32)}`;

describe('shapeOfLaunch: what a stdio command runs', () => {
  it.each([
    [['npx', '-y', '@scope/pkg', '--flag'], '@scope/pkg', 2],
    [['/usr/bin/npx', '--yes', 'pkg@1.2.3'], 'pkg@1.2.3', 2],
    [['npx', '-p', 'pkg@latest', 'pkg-bin', 'stdio'], 'pkg@latest', 2],
    [['npx', '--registry', 'http://r/', 'pkg'], 'pkg', 3],
    [['npm', 'exec', '--', '@a/b@^1', 'x'], '@a/b@^1', 3],
    [['pnpm', 'dlx', 'pkg'], 'pkg', 2],
  ])('%j runs the npm package %s (word %i)', (argv, spec, at) => {
    expect(shapeOfLaunch(argv)).toMatchObject({ kind: 'npm', spec, at });
  });

  it.each([
    [['npx', './local'], /not a registry package/],
    [['npx', 'github:a/b'], /not a registry package/],
    [['npx', '-c', 'echo hi'], /shell line/],
    [['npx', '--package=pkg', 'bin'], /two words/],
    [['uvx', 'mcp-server-git'], /npm packages/],
    [['python', '-m', 'server'], /no entry file/],
    [['docker', 'run', '-i', '--rm'], /no image/],
  ])('%j cannot be pinned: %s', (argv, problem) => {
    const shape = shapeOfLaunch(argv);
    expect(shape.kind).toBe('unsupported');
    expect(shape.kind === 'unsupported' && shape.problem).toMatch(problem);
  });

  it.each([
    [['docker', 'run', '-i', '--rm', 'mcp/fetch'], 'mcp/fetch', 4],
    [['docker', 'run', '-it', '-e', 'TOKEN', '-v', '/a:/b', 'ghcr.io/x/y:1'], 'ghcr.io/x/y:1', 7],
    [['docker', 'run', '--env=A=1', '--name', 'x', '-eB=2', 'img', 'arg'], 'img', 6],
    [['podman', 'run', '--init', '--', 'img'], 'img', 4],
  ])('%j runs the image %s (word %i)', (argv, image, at) => {
    expect(shapeOfLaunch(argv)).toEqual({ kind: 'docker', image, at });
  });

  it('reads the entry file of an interpreter, past its options', () => {
    expect(shapeOfLaunch(['node', '--require', 'hook.js', 'server.js', '--port', '1'])).toEqual({
      kind: 'program',
      program: 'node',
      entry: 'server.js',
    });
    expect(shapeOfLaunch(['/opt/bin/my-server', '--stdio'])).toEqual({
      kind: 'program',
      program: '/opt/bin/my-server',
    });
  });

  it('names the package of a registry spec only', () => {
    expect(npmName('@scope/pkg@^1.0.0')).toBe('@scope/pkg');
    expect(npmName('pkg')).toBe('pkg');
    expect(npmName('https://x/y.tgz')).toBeUndefined();
    expect(npmName('alias@npm:other')).toBe('alias');
  });
});

describe('readImageId: docker image inspect output', () => {
  it('reads the id of --format {{json .}} and of the default array', () => {
    expect(readImageId(JSON.stringify({ Id: ID, RepoTags: ['x:1'] }))).toBe(ID);
    expect(readImageId(JSON.stringify([{ Id: ID }]))).toBe(ID);
  });

  it('refuses anything else: no id, a short id, two images, not JSON', () => {
    expect(readImageId('{}')).toBeUndefined();
    expect(readImageId(JSON.stringify({ Id: 'sha256:abc' }))).toBeUndefined();
    expect(readImageId(JSON.stringify([{ Id: ID }, { Id: ID }]))).toBeUndefined();
    expect(readImageId('Error: No such image')).toBeUndefined();
  });
});

describe('resolveArtifact of docker run without docker', () => {
  it('says docker is not installed: nothing can be pinned or verified', async () => {
    const resolution = await resolveArtifact(['docker', 'run', '-i', '--rm', 'mcp/fetch'], {
      env: { PATH: '/nonexistent' },
      cwd: process.cwd(),
    });
    expect(resolution).toEqual({
      ok: false,
      problem: 'docker is not installed (not on PATH): the image of mcp/fetch cannot be resolved',
    });
  });
});

describe('readNpmView: npm view <spec> name version dist.integrity --json', () => {
  const ok = (value: unknown) => ({ code: 0, stdout: JSON.stringify(value), stderr: '' });

  it('reads one version', () => {
    expect(readNpmView(ok({ name: 'p', version: '1.0.0', 'dist.integrity': 'sha512-AA==' }), 'p')).toEqual({
      ok: true,
      name: 'p',
      version: '1.0.0',
      integrity: 'sha512-AA==',
    });
  });

  it('refuses a range matching several versions, an error, npm missing', () => {
    expect(
      readNpmView(ok({ name: 'p', version: ['1.0.0', '1.1.0'], 'dist.integrity': [] }), 'p@^1'),
    ).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/several versions/),
    });
    expect(
      readNpmView({ code: 1, stdout: '{"error":{"summary":"No match found"}}', stderr: '' }, 'p@9'),
    ).toMatchObject({ ok: false, problem: 'npm view p@9: No match found' });
    expect(readNpmView({ code: 'ENOENT', stdout: '', stderr: '' }, 'p')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/npm is not installed/),
    });
  });
});

describe('compareArtifacts', () => {
  const npm = { kind: 'npm', package: 'p', version: '1.0.0', integrity: 'sha512-AA==' } as const;

  it('is equal member by member of the kind, and names old -> new otherwise', () => {
    expect(compareArtifacts(npm, { ...npm })).toEqual({ equal: true });
    const drift = compareArtifacts(npm, { ...npm, version: '1.0.1' });
    expect(drift).toMatchObject({ equal: false, reason: 'artifact_drifted', severity: 'high' });
    expect(!drift.equal && drift.summary).toBe('npm p@1.0.0 (sha512-AA==) -> npm p@1.0.1 (sha512-AA==)');
    expect(compareArtifacts(npm, { ...npm, integrity: 'sha512-BB==' }).equal).toBe(false);
  });

  it('a server that states another version is low drift', () => {
    const server = { kind: 'server', name: 's', version: '1' } as const;
    expect(compareArtifacts(server, { ...server, version: '2' })).toMatchObject({
      equal: false,
      severity: 'low',
    });
    expect(compareArtifacts({ kind: 'docker', image: 'i', id: ID }, server)).toMatchObject({
      severity: 'high',
    });
  });
});
