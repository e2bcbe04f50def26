import { defaultTools, startLegacySseServer, startV1Server, type PeerHandle } from '../peers/index.js';
import { fixtureCommand, listStdioSurfaces, stdioPinFor, type StdioSurfaces } from '../transports/support.js';
import { pinFor, withSurfaces } from './pinFor.js';

/** Three upstreams of three transports, pinned as `web` (Streamable HTTP), `old` (HTTP+SSE), `local` (stdio). */
export interface MemberUpstreams {
  readonly web: PeerHandle;
  readonly old: PeerHandle;
  /** What the stdio fixture serves (with `TOOLPIN_FIXTURE_SURFACES`: prompts, templates, instructions). */
  readonly served: StdioSurfaces;
  /** Their pins, in that order. */
  readonly pins: readonly Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * Starts an SDK v1 server (`webTools`, pages of `pageSize`), a legacy HTTP+SSE server and lists the
 * stdio fixture run with `env`; each is pinned as it serves (the stdio one with every surface).
 */
export async function startMemberUpstreams(options: {
  readonly webTools?: Parameters<typeof startV1Server>[0]['tools'];
  readonly pageSize?: number;
  readonly env: Record<string, string>;
}): Promise<MemberUpstreams> {
  const webTools = options.webTools ?? defaultTools();
  const [web, old, served] = await Promise.all([
    startV1Server({
      mode: 'stateful-sse',
      tools: webTools,
      ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
    }),
    startLegacySseServer(),
    listStdioSurfaces(fixtureCommand(), options.env),
  ]);
  const local = withSurfaces(stdioPinFor('local', fixtureCommand(), served.tools, options.env), {
    prompts: served.prompts,
    resourceTemplates: served.resourceTemplates,
    instructions: served.instructions,
  });
  const oldPin = { ...pinFor('old', old.url, defaultTools()), upstream: { url: old.url, transport: 'sse' } };
  return {
    web,
    old,
    served,
    pins: [pinFor('web', web.url, webTools), oldPin, local],
    close: async () => {
      await Promise.all([web.close(), old.close()]);
    },
  };
}
