import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CompleteResultSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  connectV1Client,
  defaultTools,
  PeerSurfaces,
  startV1Server,
  type PeerHandle,
} from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor, withSurfaces } from '../support/pinFor.js';
import {
  listStdioSurfaces,
  startWrapInProcess,
  stdioPinFor,
  writePin,
  type InProcessWrap,
  type StdioSurfaces,
} from '../transports/support.js';

// Issue 24, finding 9: a completion/complete names a prompt or a resource template in params.ref,
// and is screened as prompts/get is, before the upstream, on every front.

type Ref = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

const GREET: Ref = { type: 'ref/prompt', name: 'greet' };
const NOTE: Ref = { type: 'ref/resource', uri: 'note:///{id}' };

/** The values a completion was answered with, or the JSON-RPC error it was refused with. */
async function complete(
  client: Client,
  ref: Ref | Record<string, unknown>,
): Promise<{ values: string[] } | { code: number; data?: unknown }> {
  try {
    const result = await client.request(
      { method: 'completion/complete', params: { ref, argument: { name: 'who', value: 'A' } } },
      CompleteResultSchema,
    );
    return { values: result.completion.values };
  } catch (error) {
    const { code, data } = error as { code?: unknown; data?: unknown };
    if (typeof code !== 'number') throw error;
    return { code, data };
  }
}

const refused = (reason: string, named: Record<string, string>): unknown => ({
  code: -32040,
  data: expect.objectContaining({ reason, ...named }),
});

describe('completion/complete through the HTTP proxy (SDK v1 upstream offering completions)', () => {
  const surfaces = new PeerSurfaces();
  let upstream: PeerHandle;
  let gateway: GatewayHarness;
  const clients: Client[] = [];
  const connect = async (): Promise<Client> => {
    const client = await connectV1Client(`${gateway.url}/surf/mcp`);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    upstream = await startV1Server({ mode: 'stateful-sse', surfaces });
    const pin = withSurfaces(pinFor('surf', upstream.url, defaultTools()), {
      prompts: surfaces.prompts(),
      resourceTemplates: surfaces.templates(),
      instructions: surfaces.instructions(),
    });
    gateway = await startGatewayHarness([pin]);
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    await gateway.close();
    await upstream.close();
  });

  it('forwards a completion naming a pinned, unchanged prompt or template', async () => {
    const client = await connect();
    expect(await complete(client, GREET)).toEqual({ values: ['Ada', 'Alan'] });
    expect(await complete(client, NOTE)).toEqual({ values: ['Ada', 'Alan'] });
    expect(surfaces.completions).toEqual(['prompt:greet', 'template:note:///{id}']);
  });

  it('refuses a completion naming an unpinned prompt or template, or neither, before the upstream', async () => {
    const client = await connect();
    const before = surfaces.completions.length;
    expect(await complete(client, { type: 'ref/prompt', name: 'exfiltrate' })).toEqual(
      refused('prompt_not_pinned', { prompt: 'exfiltrate' }),
    );
    expect(await complete(client, { type: 'ref/resource', uri: 'secret:///{path}' })).toEqual(
      refused('template_not_pinned', { template: 'secret:///{path}' }),
    );
    expect(await complete(client, { type: 'ref/tool', name: 'greet' })).toMatchObject({ code: -32602 });
    expect(await complete(client, { type: 'ref/prompt' })).toMatchObject({ code: -32602 });
    expect(surfaces.completions).toHaveLength(before);
    expect(
      gateway.events('call.blocked').map((event) => (event.decision as { reason: string }).reason),
    ).toEqual(expect.arrayContaining(['prompt_not_pinned', 'template_not_pinned']));
  });

  it('refuses a completion naming the drifted prompt or template, before the upstream', async () => {
    surfaces.drift();
    const client = await connect();
    const before = surfaces.completions.length;
    expect(await complete(client, GREET)).toEqual(
      refused('prompt_drifted', { prompt: 'greet', key: 'prompt:greet' }),
    );
    expect(await complete(client, NOTE)).toEqual(
      refused('template_drifted', { template: 'note:///{id}', key: 'template:note:///{id}' }),
    );
    expect(surfaces.completions).toHaveLength(before);
  });
});

const FIXTURE = fileURLToPath(new URL('../fixtures/completionStdioServer.mjs', import.meta.url));
const COMMAND: [string, ...string[]] = [process.execPath, FIXTURE];

/** The completions the fixture answered (its own log). */
async function completions(log: string): Promise<string[]> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line.startsWith('complete:'));
}

// The bridged front: toolpin wrap in-process, an SDK v1 stdio server as its child.
describe('completion/complete through toolpin wrap (an SDK v1 stdio server offering completions)', () => {
  let dir: string;
  let driftFile: string;
  let callLog: string;
  let env: Record<string, string>;
  let pinFile: string;
  const wraps: InProcessWrap[] = [];
  const wrap = async (): Promise<Client> => {
    const started = await startWrapInProcess(pinFile, undefined);
    wraps.push(started);
    return started.client;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-complete-'));
    driftFile = join(dir, 'drift');
    callLog = join(dir, 'calls.log');
    env = { TOOLPIN_FIXTURE_DRIFT_IF: driftFile, TOOLPIN_FIXTURE_CALL_LOG: callLog };
    const served: StdioSurfaces = await listStdioSurfaces(COMMAND, env);
    const pin = withSurfaces(stdioPinFor('wrapped', COMMAND, served.tools, env), {
      prompts: served.prompts,
      resourceTemplates: served.resourceTemplates,
      instructions: served.instructions,
    });
    pinFile = await writePin(dir, pin);
  }, 20_000);

  afterAll(async () => {
    for (const started of wraps) await started.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('forwards a pinned prompt’s and template’s completion, refuses an unpinned one', async () => {
    const client = await wrap();
    expect(await complete(client, GREET)).toEqual({ values: ['Ada', 'Alan'] });
    expect(await complete(client, NOTE)).toEqual({ values: ['Ada', 'Alan'] });
    expect(await complete(client, { type: 'ref/prompt', name: 'exfiltrate' })).toEqual(
      refused('prompt_not_pinned', { prompt: 'exfiltrate' }),
    );
    expect(await complete(client, { type: 'ref/resource', uri: 'secret:///{path}' })).toEqual(
      refused('template_not_pinned', { template: 'secret:///{path}' }),
    );
    expect(await completions(callLog)).toEqual(['complete:prompt:greet', 'complete:template:note:///{id}']);
  }, 15_000);

  it('refuses the completion of a drifted prompt or template before the child', async () => {
    await writeFile(driftFile, '');
    const client = await wrap();
    const before = (await completions(callLog)).length;
    // Before any listing: the gateway lists prompts (templates) itself, then refuses.
    expect(await complete(client, GREET)).toEqual(refused('prompt_drifted', { prompt: 'greet' }));
    expect(await complete(client, NOTE)).toEqual(refused('template_drifted', { template: 'note:///{id}' }));
    expect(await completions(callLog)).toHaveLength(before);
  }, 15_000);
});
