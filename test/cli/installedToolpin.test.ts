// The README's install path, as a user takes it: scripts/installGlobal.mjs (the `install:global`
// script) packs @toolpin/digest and @toolpin/gateway with `pnpm pack` and installs both tarballs
// with `npm install -g`, here into a temporary prefix. The installed `toolpin` then runs from that
// prefix alone (its own node_modules, not the workspace's): `--version`, then `protect` on a Claude
// Desktop config whose rewritten entry a real SDK client starts over stdio (the installed `wrap`),
// and `unprotect`. Packed and installed once for the file.
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
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

/** An entry of a client config's `mcpServers`. */
interface Entry {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
}

describe('toolpin installed from the packed tarballs', () => {
  let dir: string;
  let toolpin: string;
  let installedMain: string;

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
    installedMain = await realpath(
      join(prefix, 'lib', 'node_modules', '@toolpin', 'gateway', 'dist', 'cli', 'main.js'),
    );
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
    'toolpin protect on a Claude Desktop config, the rewritten entry started as the client does: tools listed and called through the installed toolpin, a drifted one refused; unprotect restores it',
    async () => {
      const config = join(dir, 'claude_desktop_config.json');
      const driftFlag = join(dir, 'drifted');
      // The server's env stays in the entry (its pin has the name); the fixture serves a drifted `echo`
      // once driftFlag exists.
      const original = `${JSON.stringify(
        {
          mcpServers: {
            fixture: {
              command: process.execPath,
              args: [FIXTURE_SERVER],
              env: { TOOLPIN_FIXTURE_DRIFT_IF: driftFlag },
            },
          },
        },
        null,
        2,
      )}\n`;
      await writeFile(config, original);
      const protect = await runProcess(toolpin, ['protect', config, '--dir', join(dir, 'pins')]);
      expect(protect.code).toBe(0);
      const entry = (JSON.parse(await readFile(config, 'utf8')) as { mcpServers: Record<string, Entry> })
        .mcpServers.fixture;
      // The installed copy runs wrap from where npm put it, not from the workspace.
      expect(entry?.args).toEqual([installedMain, 'wrap', '--pin', join(dir, 'pins', 'fixture.yaml')]);

      await writeFile(driftFlag, '');
      const transport = new StdioClientTransport({
        command: entry?.command ?? '',
        args: entry?.args ?? [],
        ...(entry?.env === undefined ? {} : { env: entry.env }),
        stderr: 'ignore',
      });
      const client = new Client({ name: 'claude-desktop-like', version: '1.0.0' });
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

      expect((await runProcess(toolpin, ['unprotect', config])).code).toBe(0);
      expect(await readFile(config, 'utf8')).toBe(original);
    },
    SPAWN,
  );
});
