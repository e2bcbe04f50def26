import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { fixture, runCli } from './runCli.js';

const published = JSON.parse(readFileSync(fixture('digests.json'), 'utf8')) as {
  catalogs: Record<string, { file: string; tools: Record<string, string>; manifest: string }>;
};
const dir = mkdtempSync(join(tmpdir(), 'toolpin-cli-'));

function write(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

describe('toolpin digest', () => {
  it.each(Object.entries(published.catalogs))(
    'prints the published %s catalog digest and per-tool map with --json',
    async (_name, { file, tools, manifest }) => {
      const result = await runCli('digest', fixture(file), '--json');
      const sorted = Object.fromEntries(Object.entries(tools).sort(([a], [b]) => (a < b ? -1 : 1)));
      expect(result).toEqual({
        code: 0,
        stdout:
          JSON.stringify({ profile: 'trace.mcp-tool-definition.v1', catalog: manifest, tools: sorted }) +
          '\n',
        stderr: '',
      });
    },
  );

  it('prints the AgentAvow digest under --profile', async () => {
    const result = await runCli(
      'digest',
      fixture('deepwiki-tools-list.json'),
      '--json',
      '--profile',
      'agentavow.mcp-tool-definition.v1',
    );
    expect(JSON.parse(result.stdout).catalog).toBe(
      'sha256:9d4a7d42e2b6c025099570b6dfff977f9e58ea3fce98f727c58454e936025e84',
    );
  });

  it('reads a bare tools array and a whole JSON-RPC response alike', async () => {
    const { tools } = JSON.parse(readFileSync(fixture('deepwiki-tools-list.json'), 'utf8')) as {
      tools: unknown[];
    };
    const bare = write('bare.json', JSON.stringify(tools));
    const rpc = write('rpc.json', JSON.stringify({ jsonrpc: '2.0', id: 7, result: { tools } }));
    for (const path of [bare, rpc]) {
      expect(JSON.parse((await runCli('digest', path, '--json')).stdout).catalog).toBe(
        published.catalogs.deepwiki?.manifest,
      );
    }
  });

  it('prints a table of key, digest and name, then the catalog line', async () => {
    const result = await runCli('digest', fixture('cloudflare-docs-tools-list.json'));
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'KEY                                   DIGEST                                                                   NAME',
        'tool:migrate_pages_to_workers_guide   sha256:8f5e64cb597baefb37e8f11d4325f7fe88d23e4947301ef777897aa2ea8e599b  migrate_pages_to_workers_guide',
        'tool:search_cloudflare_documentation  sha256:c4411b558681b396ca09a421f5dad4582804d906f80cd02a6f823d5d6b3d700e  search_cloudflare_documentation',
        '',
        'profile  trace.mcp-tool-definition.v1',
        'tools    2',
        'catalog  sha256:aa6ec740288222f2e1081056057f05a0d4a38d4114fe3914ba9b95270835e53b',
        '',
      ].join('\n'),
    );
  });

  it.each([
    ['an unreadable file', () => join(dir, 'missing.json'), /missing\.json: cannot read the file/],
    ['bad JSON', () => write('bad.json', '{"tools": ['), /bad\.json: not valid JSON/],
    [
      'the wrong shape',
      () => write('shape.json', '{"result": {}}'),
      /shape\.json: expected an array of tools/,
    ],
    [
      'a tool without digest',
      () => write('nan.json', '[{"name":"ok"},{"name":"huge","inputSchema":{"maximum":1e999}}]'),
      /nan\.json: tool "huge" at index 1 has no digest: Infinity is not allowed/,
    ],
    [
      'a lone surrogate',
      () => write('surrogate.json', '{"tools":[{"name":"x\\ud800"}]}'),
      /surrogate\.json: tool "x\\ud800" at index 0 has no digest: lone surrogate is not allowed/,
    ],
    ['an entry that is not an object', () => write('entry.json', '[1]'), /tool at index 0 has no digest/],
  ])('exits 2 on %s, with a message on stderr and nothing on stdout', async (_label, path, message) => {
    const result = await runCli('digest', path(), '--json');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });

  it('exits 2 on a usage error', async () => {
    expect((await runCli('digest')).code).toBe(2);
  });
});

describe('toolpin key', () => {
  it('prints the fold key of a name', async () => {
    expect(await runCli('key', 'search 🙂')).toEqual({
      code: 0,
      stdout: 'tool:search%20%F0%9F%99%82\n',
      stderr: '',
    });
  });
});
