import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectV1Client, connectV2Client } from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { withSurfaces } from '../support/pinFor.js';
import { promptRefusal, servedView, type SurfaceClient } from '../support/surfaceClient.js';
import {
  fixtureCommand,
  listStdioSurfaces,
  startWrapInProcess,
  stdioPinFor,
  writePin,
  type InProcessWrap,
  type StdioSurfaces,
} from './support.js';

const EVERYTHING = { prompts: ['greet'], templates: ['note:///{id}'] };
const NOTHING = { prompts: [], templates: [] };

/** A pin of the drifting fixture (with TOOLPIN_FIXTURE_SURFACES) approving what `served` lists. */
function pinOf(name: string, env: Record<string, string>, served: StdioSurfaces): Record<string, unknown> {
  return withSurfaces(stdioPinFor(name, fixtureCommand(), served.tools, env), {
    prompts: served.prompts,
    resourceTemplates: served.resourceTemplates,
    instructions: served.instructions,
  });
}

/** How many prompts/get the fixture executed (its own log). */
async function promptGets(log: string): Promise<number> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line.startsWith('prompt:')).length;
}

describe('stdio upstream (bridged) and wrap: prompts, resource templates and instructions pinned', () => {
  let dir: string;
  let driftFile: string;
  let callLog: string;
  let env: Record<string, string>;
  let original: StdioSurfaces;
  let drifted: StdioSurfaces;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-surfaces-'));
    driftFile = join(dir, 'drift');
    callLog = join(dir, 'calls.log');
    env = {
      TOOLPIN_FIXTURE_SURFACES: '1',
      TOOLPIN_FIXTURE_DRIFT_IF: driftFile,
      TOOLPIN_FIXTURE_CALL_LOG: callLog,
    };
    original = await listStdioSurfaces(fixtureCommand(), env);
    await writeFile(driftFile, '');
    drifted = await listStdioSurfaces(fixtureCommand(), env);
    await rm(driftFile);
  }, 20_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the fixture drifts every surface (the premise of the tests below)', () => {
    expect(drifted.instructions).not.toBe(original.instructions);
    expect(drifted.prompts[0]?.description).not.toBe(original.prompts[0]?.description);
    expect(drifted.resourceTemplates[0]?.description).not.toBe(original.resourceTemplates[0]?.description);
  });

  describe('serve: the HTTP front, a child per session (2025 bridge and 2026-07-28 forwarding server)', () => {
    let gateway: GatewayHarness;
    const clients: { close(): Promise<void> }[] = [];
    const connect = async (v2 = false): Promise<SurfaceClient> => {
      const url = `${gateway.url}/fixture/mcp`;
      const client = v2 ? await connectV2Client(url) : await connectV1Client(url);
      clients.push(client);
      return client;
    };

    beforeAll(async () => {
      gateway = await startGatewayHarness([pinOf('fixture', env, original)]);
    });

    afterAll(async () => {
      for (const client of clients) await client.close();
      await gateway.close();
      await rm(driftFile, { force: true });
    });

    it('serves every pinned surface of an unchanged server', async () => {
      const client = await connect();
      expect(await servedView(client)).toEqual({ ...EVERYTHING, instructions: original.instructions });
      expect(await promptRefusal(client, 'greet')).toBeUndefined();
      expect(await promptGets(callLog)).toBe(1);
    }, 15_000);

    it('hides and refuses a drifted server’s prompt and template and withholds its instructions, in both eras', async () => {
      await writeFile(driftFile, '');
      const client = await connect();
      expect(client.getInstructions()).toBeUndefined();
      // Before any listing: the gateway lists the prompts itself (fetch on miss) and refuses.
      expect(await promptRefusal(client, 'greet')).toEqual({
        code: -32040,
        data: expect.objectContaining({ reason: 'prompt_drifted', server: 'fixture', prompt: 'greet' }),
      });
      expect(await servedView(client)).toEqual({ ...NOTHING, instructions: undefined });

      // A 2026-07-28 client: the gateway's forwarding server speaks for the child.
      const modern = await connect(true);
      expect(gateway.events('session.opened').map((event) => event.era)).toContain('2026-07-28');
      expect(modern.getInstructions()).toBeUndefined();
      expect(await servedView(modern)).toEqual({ ...NOTHING, instructions: undefined });
      expect(await promptRefusal(modern, 'greet')).toMatchObject({
        code: -32040,
        data: { reason: 'prompt_drifted' },
      });
      expect(await promptGets(callLog)).toBe(1);
      const surfaces = gateway.events('catalog.drift').map((event) => event.surface);
      expect(surfaces).toEqual(expect.arrayContaining(['instructions', 'prompts', 'resourceTemplates']));
    }, 15_000);

    it('serves them again once the drifted surfaces are approved and the pin reloaded', async () => {
      await writeFile(
        join(gateway.dir, 'servers', 'fixture.json'),
        JSON.stringify(pinOf('fixture', env, drifted), null, 2),
      );
      await gateway.running.reload();
      const client = await connect();
      expect(await servedView(client)).toEqual({ ...EVERYTHING, instructions: drifted.instructions });
      expect(await promptRefusal(client, 'greet')).toBeUndefined();
      const modern = await connect(true);
      expect(modern.getInstructions()).toBe(drifted.instructions);
      expect(await promptGets(callLog)).toBe(2);
    }, 15_000);
  });

  // wrap in-process (the command the binary runs): the fixture's environment is in the pin.
  describe('wrap: the stdio front', () => {
    const wraps: InProcessWrap[] = [];
    let before = 0;

    beforeAll(async () => {
      await writeFile(driftFile, '');
      before = await promptGets(callLog);
    });

    afterAll(async () => {
      for (const wrap of wraps) await wrap.close();
      await rm(driftFile, { force: true });
    });

    it('hides, refuses and withholds the drifted surfaces', async () => {
      const pinned = await startWrapInProcess(
        await writePin(dir, pinOf('wrapped', env, original)),
        undefined,
      );
      wraps.push(pinned);
      expect(pinned.client.getInstructions()).toBeUndefined();
      expect(await promptRefusal(pinned.client, 'greet')).toMatchObject({
        code: -32040,
        data: { reason: 'prompt_drifted', prompt: 'greet' },
      });
      expect(await servedView(pinned.client)).toEqual({ ...NOTHING, instructions: undefined });
      expect(await promptGets(callLog)).toBe(before);
      expect(pinned.events('catalog.drift').map((event) => event.surface)).toEqual(
        expect.arrayContaining(['instructions', 'prompts', 'resourceTemplates']),
      );
    }, 15_000);

    it('serves them under the approved pin', async () => {
      const approved = await startWrapInProcess(
        await writePin(dir, pinOf('wrapped', env, drifted)),
        undefined,
      );
      wraps.push(approved);
      expect(await servedView(approved.client)).toEqual({
        ...EVERYTHING,
        instructions: drifted.instructions,
      });
      expect(await promptRefusal(approved.client, 'greet')).toBeUndefined();
      expect(await promptGets(callLog)).toBe(before + 1);
    }, 15_000);
  });
});
