import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Prompt, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import { connectV1Client, startEverythingServer, type EverythingServerHandle } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor, withSurfaces } from '../support/pinFor.js';

describe('@modelcontextprotocol/server-everything pinned with every surface, through the gateway', () => {
  let upstream: EverythingServerHandle;
  let gateway: GatewayHarness;
  let client: Client;
  let tools: Tool[];
  let prompts: Prompt[];
  let templates: ResourceTemplate[];
  let instructions: string | undefined;

  beforeAll(async () => {
    upstream = await startEverythingServer();
    // What `toolpin pin` records: every surface the server offers, listed by a plain client.
    const direct = await connectV1Client(upstream.url);
    try {
      tools = (await direct.listTools()).tools;
      prompts = (await direct.listPrompts()).prompts;
      templates = (await direct.listResourceTemplates()).resourceTemplates;
      instructions = direct.getInstructions();
    } finally {
      await direct.close();
    }
    const pin = withSurfaces(pinFor('everything', upstream.url, tools), {
      prompts,
      resourceTemplates: templates,
      instructions: instructions ?? null,
    });
    gateway = await startGatewayHarness([pin]);
    client = await connectV1Client(`${gateway.url}/everything/mcp`);
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    await upstream?.close();
  });

  it('delivers the pinned instructions and lists every pinned tool, prompt and resource template', async () => {
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(
      tools.map((tool) => tool.name).sort(),
    );
    expect(instructions).toEqual(expect.any(String));
    expect(client.getInstructions()).toBe(instructions);
    const listed = await client.listPrompts();
    expect(listed.prompts.map((prompt) => prompt.name).sort()).toEqual(
      prompts.map((prompt) => prompt.name).sort(),
    );
    expect(listed.prompts.length).toBeGreaterThanOrEqual(3);
    const listedTemplates = await client.listResourceTemplates();
    expect(listedTemplates.resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual(
      templates.map((template) => template.uriTemplate).sort(),
    );
    expect(templates.length).toBeGreaterThanOrEqual(1);
    expect(gateway.events('catalog.drift')).toEqual([]);
  });

  it('answers prompts/get of pinned prompts, with and without arguments', async () => {
    const simple = await client.getPrompt({ name: 'simple-prompt' });
    expect(simple.messages.length).toBeGreaterThanOrEqual(1);
    const args = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } });
    expect(args.messages[0]?.content).toEqual({ type: 'text', text: "What's weather in Paris?" });
    expect(gateway.events('call.blocked')).toEqual([]);
  });

  it('reads resources, through a pinned template too', async () => {
    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThanOrEqual(1);
    const first = resources[0] as { uri: string };
    const read = await client.readResource({ uri: first.uri });
    expect(read.contents[0]?.uri).toBe(first.uri);
    const template = templates.find((candidate) => candidate.uriTemplate.includes('{resourceId}'));
    expect(template).toBeDefined();
    const uri = (template as ResourceTemplate).uriTemplate.replace('{resourceId}', '1');
    const dynamic = await client.readResource({ uri });
    expect(dynamic.contents[0]?.uri).toBe(uri);
    const verified = gateway.events('catalog.verified').map((event) => event.surface ?? 'tools');
    expect(verified).toEqual(
      expect.arrayContaining(['instructions', 'prompts', 'resourceTemplates', 'tools']),
    );
  });
});
