import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { pinFromCatalog } from '../../src/config/pinFromCatalog.js';
import { findUncheckedSchemas, reportUncheckedSchemas } from '../../src/cli/reportUncheckedSchemas.js';
import { runCli } from './runCli.js';

const TOOLS = [
  { name: 'fine', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } },
  {
    name: 'remote',
    inputSchema: { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } },
  },
  { name: 'broken_output', inputSchema: { type: 'object' }, outputSchema: { type: 'objekt' } },
];

describe('toolpin pin: schemas the gateway cannot compile', () => {
  it('finds each uncompilable schema, naming the tool, the member and why', () => {
    const { definitions } = pinFromCatalog(TOOLS, 'trace.mcp-tool-definition.v1');
    expect(findUncheckedSchemas(definitions)).toEqual([
      {
        tool: 'broken_output',
        key: 'tool:broken_output',
        member: 'outputSchema',
        problem: expect.any(String),
      },
      {
        tool: 'remote',
        key: 'tool:remote',
        member: 'inputSchema',
        problem: expect.stringContaining('https://example.com/a.json'),
      },
    ]);
    const lines: string[] = [];
    reportUncheckedSchemas(definitions, (line) => lines.push(line));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(
      /^unverifiable: tool "remote": its inputSchema cannot be compiled .*validate: \{ "tool:remote": false \}\n$/,
    );
  });

  it('names every tool whose schema cannot be compiled when several tools share that schema', () => {
    const shared = { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } };
    const tools = ['one', 'two', 'three'].map((name) => ({
      name,
      inputSchema: shared,
      outputSchema: shared,
    }));
    const { definitions } = pinFromCatalog([...tools, TOOLS[0]!], 'trace.mcp-tool-definition.v1');
    const found = findUncheckedSchemas(definitions);
    expect(found.map(({ tool, member }) => `${tool} ${member}`)).toEqual([
      'one inputSchema',
      'one outputSchema',
      'three inputSchema',
      'three outputSchema',
      'two inputSchema',
      'two outputSchema',
    ]);
    expect(new Set(found.map(({ problem }) => problem)).size).toBe(1);
    expect(found[0]?.problem).toContain('https://example.com/a.json');
  });

  it('says so on stderr and still pins every digest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolpin-pin-schemas-'));
    try {
      const catalog = join(dir, 'catalog.json');
      await writeFile(catalog, JSON.stringify({ tools: TOOLS }));
      const run = await runCli(
        'pin',
        '--name',
        'srv',
        '--from-file',
        catalog,
        '--upstream',
        'http://127.0.0.1:9/mcp',
      );
      expect(run.code).toBe(0);
      expect(run.stderr).toContain('unverifiable: tool "remote": its inputSchema cannot be compiled');
      expect(run.stderr).toContain('unverifiable: tool "broken_output": its outputSchema cannot be compiled');
      expect(run.stderr).not.toContain('"fine"');
      const pin = parse(run.stdout) as { pin: { tools: Record<string, string> } };
      expect(Object.keys(pin.pin.tools).sort()).toEqual(['tool:broken_output', 'tool:fine', 'tool:remote']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
