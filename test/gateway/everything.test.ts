import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type ClientCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { connectV1Client, startEverythingServer, type EverythingServerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';

/** server-everything registers its sampling/elicitation/roots tools only for clients that declare these. */
const CAPABILITIES: ClientCapabilities = { sampling: {}, elicitation: {}, roots: { listChanged: true } };

/** Names server-everything's dist registers (tools/index.js), conditional ones included. */
const LONG_RUNNING = 'trigger-long-running-operation';
const SAMPLING = 'trigger-sampling-request';
const ELICITATION = 'trigger-elicitation-request';

/** Connects a v1 client with the capabilities and handlers for every server→client request. */
async function connectCapableClient(url: string): Promise<Client> {
  const client = await connectV1Client(url, { capabilities: CAPABILITIES });
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: [{ uri: 'file:///tmp/toolpin-e2e', name: 'e2e' }],
  }));
  client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
    role: 'assistant',
    model: 'toolpin-test-model',
    content: { type: 'text', text: `sampled ${request.params.messages.length} message(s)` },
  }));
  client.setRequestHandler(ElicitRequestSchema, () => ({
    action: 'accept',
    content: { name: 'Ada Lovelace', check: true },
  }));
  return client;
}

/**
 * The catalog a capable client sees: the conditional tools are registered after
 * notifications/initialized and announced with list_changed, so listing waits for that.
 */
async function listCapableCatalog(url: string): Promise<Tool[]> {
  const client = await connectCapableClient(url);
  try {
    for (let attempt = 0; attempt < 50; attempt++) {
      const { tools } = await client.listTools();
      if (tools.some((tool) => tool.name === SAMPLING)) return tools;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('server-everything never listed its conditional tools');
  } finally {
    await client.close();
  }
}

describe('gateway in front of @modelcontextprotocol/server-everything (streamable HTTP)', () => {
  let upstream: EverythingServerHandle;
  let gateway: GatewayHarness;
  let client: Client;
  let pinned: Tool[];

  beforeAll(async () => {
    upstream = await startEverythingServer();
    pinned = await listCapableCatalog(upstream.url);
    gateway = await startGatewayHarness([pinFor('everything', upstream.url, pinned)]);
    client = await connectCapableClient(`${gateway.url}/everything/mcp`);
  }, 20_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    await upstream?.close();
  });

  it('lists the pinned catalog, conditional tools included, and calls echo', async () => {
    let listed: Tool[] = [];
    for (let attempt = 0; attempt < 50 && !listed.some((tool) => tool.name === SAMPLING); attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      listed = (await client.listTools()).tools;
    }
    expect(listed.map((tool) => tool.name).sort()).toEqual(pinned.map((tool) => tool.name).sort());
    expect(listed.map((tool) => tool.name)).toEqual(
      expect.arrayContaining([LONG_RUNNING, SAMPLING, ELICITATION, 'echo']),
    );
    // A listing made before the conditional tools were registered reports them removed; nothing else may drift.
    const findings = gateway.events('catalog.drift').flatMap((event) => event.drift as { kind: string }[]);
    expect(findings.filter((finding) => finding.kind !== 'removed')).toEqual([]);
    expect(gateway.logs.filter((line) => String(line.event).startsWith('catalog.')).at(-1)?.event).toBe(
      'catalog.verified',
    );
    const result = await client.callTool({ name: 'echo', arguments: { message: 'through toolpin' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: through toolpin' }]);
  });

  it('relays progress notifications as they happen, before the result', async () => {
    const arrivals: { what: string; at: number }[] = [];
    const started = performance.now();
    const result = await client.callTool(
      { name: LONG_RUNNING, arguments: { duration: 0.6, steps: 3 } },
      undefined,
      {
        onprogress: (progress) =>
          arrivals.push({
            what: `progress ${progress.progress}/${String(progress.total)}`,
            at: performance.now() - started,
          }),
      },
    );
    arrivals.push({ what: 'result', at: performance.now() - started });
    expect(result.content).toEqual([
      expect.objectContaining({
        type: 'text',
        text: expect.stringContaining('Long running operation completed'),
      }),
    ]);
    expect(arrivals.map((arrival) => arrival.what)).toEqual([
      'progress 1/3',
      'progress 2/3',
      'progress 3/3',
      'result',
    ]);
    // The upstream sleeps 200 ms per step: a gateway that held the stream until the result would
    // deliver progress 1 together with the result instead of two steps earlier.
    const first = arrivals[0]?.at ?? Infinity;
    const last = arrivals[3]?.at ?? 0;
    expect(last - first).toBeGreaterThanOrEqual(200);
  });

  it('carries a sampling request to the client and its answer back on the call stream', async () => {
    const result = await client.callTool({ name: SAMPLING, arguments: { prompt: 'say hi', maxTokens: 5 } });
    const text = (result.content as { text?: string }[]).map((part) => part.text ?? '').join('\n');
    expect(text).toContain('LLM sampling result');
    expect(text).toContain('sampled 1 message(s)');
  });

  it('carries an elicitation request to the client and its answer back', async () => {
    const result = await client.callTool({ name: ELICITATION, arguments: {} });
    const text = (result.content as { text?: string }[]).map((part) => part.text ?? '').join('\n');
    expect(text).toContain('Name: Ada Lovelace');
  });

  it('serves a client without those capabilities the pinned subset it is offered', async () => {
    const plain = await connectV1Client(`${gateway.url}/everything/mcp`);
    try {
      const { tools } = await plain.listTools();
      const names = tools.map((tool) => tool.name);
      expect(names).toContain('echo');
      expect(names).not.toContain(SAMPLING);
      expect(names.every((name) => pinned.some((tool) => tool.name === name))).toBe(true);
      const findings = gateway.events('catalog.drift').flatMap((event) => event.drift as { kind: string }[]);
      expect(findings.filter((finding) => finding.kind !== 'removed')).toEqual([]);
      const result = await plain.callTool({ name: 'echo', arguments: { message: 'subset' } });
      expect(result.content).toEqual([{ type: 'text', text: 'Echo: subset' }]);
    } finally {
      await plain.close();
    }
  });

  it('passes resources and prompts through untouched', async () => {
    const resources = await client.listResources();
    expect(resources.resources.length).toBeGreaterThan(0);
    const first = resources.resources[0];
    if (first === undefined) throw new Error('no resource');
    const read = await client.readResource({ uri: first.uri });
    expect(read.contents[0]?.uri).toBe(first.uri);
    const prompts = await client.listPrompts();
    expect(prompts.prompts.map((prompt) => prompt.name)).toContain('simple-prompt');
    const prompt = await client.getPrompt({ name: 'simple-prompt' });
    expect(prompt.messages.length).toBeGreaterThan(0);
    expect(gateway.events('call.blocked')).toHaveLength(0);
  });
});
