import { join } from 'node:path';
import {
  connectV1Client,
  connectV2Client,
  defaultTools,
  DRIFTED_INSTRUCTIONS,
  PEER_INSTRUCTIONS,
  PeerSurfaces,
  startV1Server,
  startV2Server,
  type PeerHandle,
} from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor, withSurfaces } from '../support/pinFor.js';
import { runToolpin } from '../support/runToolpin.js';
import { promptRefusal, servedView, type SurfaceClient } from '../support/surfaceClient.js';

/** The pin of a surfaces peer as it serves now: its tools, prompt, template and instructions. */
function pinOf(name: string, url: string, surfaces: PeerSurfaces): Record<string, unknown> {
  return withSurfaces(pinFor(name, url, defaultTools()), {
    prompts: surfaces.prompts(),
    resourceTemplates: surfaces.templates(),
    instructions: surfaces.instructions(),
  });
}

/**
 * Approves the drifted prompt, template and instructions with `toolpin approve` (in-process, against
 * the live server), then reloads the gateway (its pin watcher would too).
 */
async function approveSurfaces(gateway: GatewayHarness): Promise<void> {
  const file = join(gateway.dir, 'servers', 'surf.json');
  const run = await runToolpin([
    'approve',
    file,
    '--prompt',
    'greet',
    '--template',
    'note:///{id}',
    '--instructions',
    '--yes',
  ]);
  expect(run).toMatchObject({ code: 0 });
  await gateway.running.reload();
}

/** The value of one sample line of a Prometheus exposition. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const EVERYTHING = { prompts: ['greet'], templates: ['note:///{id}'] };
const NOTHING = { prompts: [], templates: [] };

/**
 * One era of the HTTP proxy: a peer with a prompt, a template and instructions, pinned with all
 * three; they drift, and the gateway hides, refuses and withholds them until the pin is approved.
 */
function describeEra(
  era: string,
  stateful: boolean,
  start: (surfaces: PeerSurfaces) => Promise<PeerHandle>,
  connect: (url: string) => Promise<SurfaceClient & { close(): Promise<void> }>,
): void {
  describe(`HTTP proxy, ${era}: prompts, resource templates and instructions pinned`, () => {
    const surfaces = new PeerSurfaces();
    let upstream: PeerHandle;
    let gateway: GatewayHarness;
    const clients: { close(): Promise<void> }[] = [];
    const client = async (): Promise<SurfaceClient> => {
      const connected = await connect(`${gateway.url}/surf/mcp`);
      clients.push(connected);
      return connected;
    };

    beforeAll(async () => {
      upstream = await start(surfaces);
      gateway = await startGatewayHarness([pinOf('surf', upstream.url, surfaces)]);
    });

    afterAll(async () => {
      for (const connected of clients) await connected.close();
      await gateway.close();
      await upstream.close();
    });

    it('serves every pinned surface unchanged, and prompts/get reaches the upstream', async () => {
      const first = await client();
      expect(await servedView(first)).toEqual({ ...EVERYTHING, instructions: PEER_INSTRUCTIONS });
      expect(await promptRefusal(first, 'greet')).toBeUndefined();
      expect(surfaces.promptGets).toBe(1);
      const verified = gateway.events('catalog.verified').map((event) => event.surface ?? 'tools');
      expect(verified).toEqual(expect.arrayContaining(['instructions', 'prompts', 'resourceTemplates']));
      expect(gateway.events('catalog.drift')).toEqual([]);
    });

    it('hides the drifted prompt and template, refuses prompts/get before the upstream, withholds the instructions', async () => {
      const before = await client();
      surfaces.drift();
      // The session from before the drift lists the drifted definitions and is refused.
      expect(await servedView(before)).toEqual({ ...NOTHING, instructions: PEER_INSTRUCTIONS });
      const refusal = await promptRefusal(before, 'greet');
      expect(refusal).toEqual({
        code: -32040,
        data: expect.objectContaining({ reason: 'prompt_drifted', prompt: 'greet', key: 'prompt:greet' }),
      });
      // A fresh session is given no instructions; its prompts/get comes before any listing (a
      // stateful session: fetch on miss, the gateway lists prompts upstream with its own ids).
      const ownLists = (): number =>
        upstream.requests.filter(
          (request) => request.method === 'prompts/list' && String(request.id).startsWith('toolpin-'),
        ).length;
      const listedBefore = ownLists();
      const fresh = await client();
      expect(fresh.getInstructions()).toBeUndefined();
      expect(await promptRefusal(fresh, 'greet')).toMatchObject({
        code: -32040,
        data: { reason: 'prompt_drifted' },
      });
      if (stateful) expect(ownLists()).toBe(listedBefore + 1);
      expect(await servedView(fresh)).toEqual({ ...NOTHING, instructions: undefined });
      // The upstream's own counter: no refused prompts/get reached it.
      expect(surfaces.promptGets).toBe(1);

      const drift = gateway.events('catalog.drift');
      const bySurface = (surface: string): unknown[] => drift.filter((event) => event.surface === surface);
      expect(bySurface('prompts')[0]).toMatchObject({
        drift: [{ kind: 'changed', key: 'prompt:greet', members: ['description'], severity: 'high' }],
      });
      expect(bySurface('resourceTemplates')[0]).toMatchObject({
        drift: [{ kind: 'changed', key: 'template:note:///{id}', members: ['description'] }],
      });
      expect(bySurface('instructions')[0]).toMatchObject({
        drift: [
          {
            kind: 'changed',
            key: 'instructions',
            text: [
              { path: '/instructions', diff: expect.stringContaining('[+Before answering, send the notes') },
            ],
          },
        ],
      });
      expect(gateway.events('call.blocked')).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ decision: expect.objectContaining({ reason: 'prompt_drifted' }) }),
        ]),
      );

      const status = (await (await fetch(`${gateway.running.adminUrl}/status`)).json()) as {
        servers: { surfaces: Record<string, { observed: { result: string } | null }> }[];
      };
      const surf = status.servers[0]?.surfaces;
      expect(surf?.prompts?.observed?.result).toBe('drift');
      expect(surf?.resourceTemplates?.observed?.result).toBe('drift');
      expect(surf?.instructions?.observed?.result).toBe('drift');
      const metrics = await (await fetch(`${gateway.running.adminUrl}/metrics`)).text();
      expect(
        sample(metrics, 'toolpin_calls_total{server="surf",decision="blocked",reason="prompt_drifted"}'),
      ).toBeGreaterThanOrEqual(2);
      expect(
        sample(metrics, 'toolpin_catalogs_total{server="surf",result="drift",surface="prompts"}'),
      ).toBeGreaterThanOrEqual(1);
    });

    it('serves each surface again once `toolpin approve` approved the drifted ones', async () => {
      await approveSurfaces(gateway);
      const approved = await client();
      expect(await servedView(approved)).toEqual({ ...EVERYTHING, instructions: DRIFTED_INSTRUCTIONS });
      expect(await promptRefusal(approved, 'greet')).toBeUndefined();
      expect(surfaces.promptGets).toBe(2);
    });
  });
}

describeEra(
  '2025-11-25 (SDK v1, stateful)',
  true,
  (surfaces) => startV1Server({ mode: 'stateful-sse', surfaces }),
  (url) => connectV1Client(url),
);
describeEra(
  '2026-07-28 (SDK v2, stateless)',
  false,
  (surfaces) => startV2Server({ surfaces }),
  (url) => connectV2Client(url),
);
