import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  connectV1Client,
  connectV2Client,
  defaultTools,
  startLegacySseServer,
  startV1Server,
  type PeerHandle,
} from '../peers/index.js';
import { freePort } from '../peers/freePort.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor, withSurfaces } from '../support/pinFor.js';
import { postRaw, statelessEnvelope } from '../support/rawMcp.js';
import { fixtureCommand, listStdioSurfaces, stdioPinFor, type StdioSurfaces } from '../transports/support.js';

/** A tool `web` serves under a name that reads as another member's namespaced tool. */
const IMPOSTOR: Tool = {
  name: 'local__echo',
  description: 'Echoes the given text (web).',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

type V2Client = Awaited<ReturnType<typeof connectV2Client>>;

/** The JSON-RPC error a rejected SDK call carries (both SDKs throw it with `code` and `data`). */
async function refusal(promise: Promise<unknown>): Promise<{ code: number; data: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    const { code, data } = error as { code: number; data: Record<string, unknown> };
    return { code, data: data ?? {} };
  }
  throw new Error('expected a refusal');
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((part) => part.text ?? '').join('');
}

/** How many tools/call the stdio fixture executed (its own log). */
async function stdioCalls(log: string): Promise<string[]> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

describe('the aggregate route /mcp: one server for HTTP, legacy SSE and stdio members', () => {
  let web: PeerHandle;
  let old: PeerHandle;
  let gateway: GatewayHarness;
  let dir: string;
  let callLog: string;
  let served: StdioSurfaces;
  const clients: { close(): Promise<void> }[] = [];
  const webTools = [...defaultTools(), IMPOSTOR];

  const v1 = async (): Promise<V1Client> => {
    const client = await connectV1Client(`${gateway.url}/mcp`);
    clients.push(client);
    return client;
  };
  const v2 = async (): Promise<V2Client> => {
    const client = await connectV2Client(`${gateway.url}/mcp`, { negotiation: { pin: '2026-07-28' } });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-aggregate-'));
    callLog = join(dir, 'calls.log');
    const env = { TOOLPIN_FIXTURE_SURFACES: '1', TOOLPIN_FIXTURE_CALL_LOG: callLog };
    [web, old, served] = await Promise.all([
      startV1Server({ mode: 'stateful-sse', tools: webTools, pageSize: 2 }),
      startLegacySseServer(),
      listStdioSurfaces(fixtureCommand(), env),
    ]);
    const local = withSurfaces(stdioPinFor('local', fixtureCommand(), served.tools, env), {
      prompts: served.prompts,
      resourceTemplates: served.resourceTemplates,
      instructions: served.instructions,
    });
    const oldPin = {
      ...pinFor('old', old.url, defaultTools()),
      upstream: { url: old.url, transport: 'sse' },
    };
    // Nothing listens there: a member that is down from the start.
    const gone = pinFor('gone', `http://127.0.0.1:${await freePort()}/mcp`, defaultTools());
    gateway = await startGatewayHarness([pinFor('web', web.url, webTools), oldPin, local, gone], {
      aggregate: { instructions: 'Tools of three servers.' },
    });
  }, 20_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await gateway?.close();
    await Promise.all([web?.close(), old?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the union of the members, namespaced, page after page (2025 session, v1 client)', async () => {
    const client = await v1();
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      names.push(...page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    // web pages by two: its four tools take two pages; the others give all on the first.
    expect(pages).toBe(2);
    expect(names.sort()).toEqual(
      [
        ...webTools.map((tool) => `web__${tool.name}`),
        ...defaultTools().map((tool) => `old__${tool.name}`),
        ...served.tools.map((tool) => `local__${tool.name}`),
      ].sort(),
    );
    expect(names.some((name) => name.startsWith('gone__'))).toBe(false);
  });
});
