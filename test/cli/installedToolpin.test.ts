// The README's install path, as a user takes it: scripts/installGlobal.mjs (the `install:global`
// script) packs @toolpin/digest and @toolpin/gateway with `pnpm pack` and installs both tarballs
// with `npm install -g`, here into a temporary prefix. The installed `toolpin` then runs from that
// prefix alone (its own node_modules, not the workspace's): `--version`, `pin` and `wrap` with a
// real SDK client on its stdio. Packed and installed once for the file.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { runProcess } from '../support/runToolpin.js';
import { FIXTURE_SERVER } from '../transports/support.js';

const installScript = fileURLToPath(new URL('../../scripts/installGlobal.mjs', import.meta.url));
const gatewayManifest = fileURLToPath(new URL('../../packages/gateway/package.json', import.meta.url));

// Packing builds (tsc -b, up to date in the suite) and npm installs about 130 packages: a few
// seconds from npm's cache, longer on a machine whose cache is cold.
const INSTALL = 180_000;
const SPAWN = 30_000;

describe('toolpin installed from the packed tarballs', () => {
  let dir: string;
  let toolpin: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-installed-'));
    const prefix = join(dir, 'prefix');
    const install = await runProcess(process.execPath, [
      installScript,
      '--prefix',
      prefix,
      '--prefer-offline',
    ]);
    if (install.code !== 0) throw new Error(`install:global failed (${install.code}):\n${install.stderr}`);
    toolpin = join(prefix, 'bin', 'toolpin');
  }, INSTALL);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'toolpin --version prints the version of the gateway package',
    async () => {
      const { version } = JSON.parse(await readFile(gatewayManifest, 'utf8')) as { version: string };
      expect(await runProcess(toolpin, ['--version'])).toEqual({
        code: 0,
        stdout: `${version}\n`,
        stderr: '',
      });
    },
    SPAWN,
  );

  it(
    'toolpin pin, then toolpin wrap in front of a stdio server: the pinned tools listed and called, a drifted one hidden and refused',
    async () => {
      const pinFile = join(dir, 'fixture.yaml');
      const server = `${process.execPath} ${FIXTURE_SERVER}`;
      const pinned = await runProcess(toolpin, [
        'pin',
        '--name',
        'fixture',
        '--command',
        server,
        '--out',
        pinFile,
      ]);
      expect(pinned.code).toBe(0);
      expect(pinned.stderr).toContain('listed 5 tools in 1 page(s)');

      // As a desktop client's config launches it; the server serves a drifted `echo` from the start.
      const transport = new StdioClientTransport({
        command: toolpin,
        args: ['wrap', '--pin', pinFile, '--log-level', 'warn', '--', process.execPath, FIXTURE_SERVER],
        env: { PATH: process.env.PATH ?? '', TOOLPIN_FIXTURE_DRIFT: '1' },
        stderr: 'pipe',
      });
      const client = new Client({ name: 'installed-toolpin-test', version: '1.0.0' });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name).sort()).toEqual(['add', 'crash', 'rug-pull', 'slow']);
        expect(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).toMatchObject({
          content: [{ type: 'text', text: '5' }],
        });
        const refused = await client
          .callTool({ name: 'echo', arguments: { text: 'hi' } })
          .catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(McpError);
        expect((refused as McpError).code).toBe(-32040);
        expect((refused as McpError).data).toMatchObject({
          reason: 'tool_drifted',
          server: 'fixture',
          tool: 'echo',
        });
      } finally {
        await client.close();
      }
    },
    SPAWN,
  );
});
