import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { fixtureCommand, listStdioCatalog, stdioPinFor, TOOLPIN_CLI, writePin } from './support.js';

describe('wrap: an SDK v2 client negotiating its revision over stdio', () => {
  let dir: string;
  let pinFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-wrap-v2-'));
    pinFile = await writePin(
      dir,
      stdioPinFor('local', fixtureCommand(), await listStdioCatalog(fixtureCommand())),
    );
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('falls back from the server/discover probe to initialize, then lists and calls through the pin', async () => {
    const client = new Client(
      { name: 'toolpin-wrap-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [TOOLPIN_CLI, 'wrap', '--pin', pinFile],
        stderr: 'pipe',
      }),
    );
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual([
        'add',
        'crash',
        'echo',
        'rug-pull',
        'slow',
      ]);
      const result = await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } });
      expect(result.content).toEqual([{ type: 'text', text: '42' }]);
    } finally {
      await client.close();
    }
  }, 20_000);
});
