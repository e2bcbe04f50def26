import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { connectV1Client } from '../peers/index.js';
import { startGatewayHarness } from '../support/gatewayHarness.js';
import { catalogAtStart, fixtureCommand, runWrapInProcess, stdioPinFor, writePin } from './support.js';
import { rejectionOf } from '../support/rejection.js';

/** A stdio server of the 2026-07-28 era (SDK v2 serveStdio): it answers server/discover. */
const MODERN_SERVER = fileURLToPath(new URL('../fixtures/modernStdioServer.mjs', import.meta.url));
const COMMAND: [string, ...string[]] = [process.execPath, MODERN_SERVER];

/** An SDK v2 client and the `toolpin wrap --pin <file>` it talks to (in-process: what wrap decides). */
interface V2Wrap {
  readonly client: Client;
  /** Closes the client and ends wrap. */
  close(): Promise<void>;
}

/**
 * An SDK v2 client with `versionNegotiation` (`{ pin: '2026-07-28' }`: that revision only), on the
 * stdio of `toolpin wrap --pin <file>` run in-process (runWrapInProcess).
 */
async function connectV2Wrap(pinFile: string, mode: 'auto' | { pin: '2026-07-28' }): Promise<V2Wrap> {
  const wrap = runWrapInProcess(pinFile, undefined);
  const client = new Client({ name: 'toolpin-wrap-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
  // The client side of a stdio pair is the same line framing: it reads wrap's stdout, writes its stdin.
  await client.connect(new StdioServerTransport(wrap.stdout, wrap.stdin));
  return {
    client,
    close: async () => {
      await client.close();
      await wrap.end();
    },
  };
}

/** An SDK v2 client that speaks only 2026-07-28, against `toolpin wrap --pin <file>`. */
function connectPinnedModern(pinFile: string): Promise<V2Wrap> {
  return connectV2Wrap(pinFile, { pin: '2026-07-28' });
}

describe('a 2026-07-28 stdio server behind wrap and serve', () => {
  let dir: string;
  let pinned: Tool[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-modern-stdio-'));
    pinned = await catalogAtStart(COMMAND);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('carries a client pinned to 2026-07-28 through wrap, fetch on miss included', async () => {
    const wrap = await connectPinnedModern(await writePin(dir, stdioPinFor('modern', COMMAND, pinned)));
    const client = wrap.client;
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      // No listing yet: the gateway lists with the client's envelope, in the client's revision.
      const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      expect(sum.content).toEqual([{ type: 'text', text: '5' }]);
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo']);
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'modern' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'modern' }]);
    } finally {
      await wrap.close();
    }
  }, 20_000);

  it('blocks the drifted tool of a 2026-07-28 server for a 2026-07-28 client', async () => {
    const pin = stdioPinFor('modern-drifted', COMMAND, pinned, { TOOLPIN_FIXTURE_DRIFT: '1' });
    const wrap = await connectPinnedModern(await writePin(dir, pin));
    const client = wrap.client;
    try {
      const outcome = await rejectionOf(
        client.callTool({ name: 'echo', arguments: { text: 'x' } }),
        ProtocolError,
      );
      expect(outcome.code).toBe(-32040);
      expect(outcome.data).toMatchObject({ reason: 'tool_drifted', tool: 'echo' });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['add']);
    } finally {
      await wrap.close();
    }
  }, 20_000);

  it('serves the same server behind serve to a 2025-era session client and to a 2026-07-28 client', async () => {
    const gateway = await startGatewayHarness([stdioPinFor('modern', COMMAND, pinned)]);
    const session = await connectV1Client(`${gateway.url}/modern/mcp`);
    const stateless = new Client(
      { name: 'toolpin-modern-http-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    try {
      expect((await session.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo']);
      const sum = await session.callTool({ name: 'add', arguments: { a: 20, b: 22 } });
      expect(sum.content).toEqual([{ type: 'text', text: '42' }]);
      await stateless.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/modern/mcp`)));
      const echoed = await stateless.callTool({ name: 'echo', arguments: { text: 'both eras' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'both eras' }]);
    } finally {
      await stateless.close();
      await session.close();
      await gateway.close();
    }
  }, 20_000);
});

// Formerly test/transports/wrapNegotiation.test.ts.
describe('wrap: an SDK v2 client negotiating its revision over stdio', () => {
  let dir: string;
  let pinFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-wrap-v2-'));
    pinFile = await writePin(
      dir,
      stdioPinFor('local', fixtureCommand(), await catalogAtStart(fixtureCommand())),
    );
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('falls back from the server/discover probe to initialize, then lists and calls through the pin', async () => {
    const wrap = await connectV2Wrap(pinFile, 'auto');
    const client = wrap.client;
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
      await wrap.close();
    }
  }, 20_000);
});
