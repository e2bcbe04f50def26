import { dirname } from 'node:path';
import { isStdioUpstream, type ServerConfig } from '../config/index.js';
import type { DriftExplanation } from '../explain/explainDrift.js';
import { explainPinDrift } from '../config/planPinUpdate.js';
import type { LiveCatalog, LiveTarget } from './fetchLiveCatalog.js';
import { upstreamOAuthOf } from './upstreamOAuth.js';
import { observeLive, type ObservedCatalog, type SurfaceChoice } from './observeCatalog.js';
import { explainSurfaces, type SurfacesExplanation } from '../config/planSurfaceUpdate.js';
import type { PinnedSurface } from '../config/pinSurfaces.js';
import type { PinnedArtifact } from '../config/types.js';
import { compareArtifacts, type ArtifactComparison } from '../policy/artifactDrift.js';
import { resolveLaunchArtifact } from './resolveArtifact.js';
import { recordableServer, statedServerInfo } from '../policy/statedArtifact.js';

/** A pin file, the live catalog of its server, and how they differ. */
export interface PinnedLiveCatalog {
  readonly file: string;
  /** The text the pin was read from (approve writes only if the file still holds it). */
  readonly text: string;
  readonly server: ServerConfig;
  readonly observed: ObservedCatalog;
  readonly explanation: DriftExplanation;
  readonly pages: number;
  /** The surfaces beside tools the pin pins, compared. */
  readonly surfaces: SurfacesExplanation;
  /** Pages listed per surface beside tools (0: the server no longer offers it). */
  readonly surfacePages: Partial<Record<PinnedSurface, number>>;
  /** The surfaces the server offers that the pin does not pin (not enforced; a pin written before issue 14 pins tools only). */
  readonly notPinned: readonly (PinnedSurface | 'instructions')[];
  /** The upstream's artifact (a stdio command's package, file or image; an HTTP server's stated name and version): what it is now, and how that compares with the pin. */
  readonly artifact?: LiveArtifact;
}

/** The artifact of an upstream as `check` and `approve` see it (docs/pin-lifecycle.md#the-artifact). */
export interface LiveArtifact {
  readonly pinned?: PinnedArtifact;
  /** What the command resolves to, or the server states, now; absent when it cannot be told (`problem`). */
  readonly observed?: PinnedArtifact;
  readonly problem?: string;
  /** Set when both are known. */
  readonly comparison?: ArtifactComparison;
}

/** The listing target of a stdio pin, rewritten to run exactly its resolved artifact, and that artifact. */
async function liveArtifactOf(
  server: ServerConfig,
  target: LiveTarget,
  baseDir: string,
): Promise<{ target: LiveTarget; artifact?: LiveArtifact }> {
  if ('url' in target) return { target };
  const { resolution, launch } = await resolveLaunchArtifact(target, { baseDir });
  const pinned = server.pin.artifact;
  const known = pinned === undefined ? {} : { pinned };
  if (!resolution.ok) return { target, artifact: { ...known, problem: resolution.problem } };
  const observed = resolution.artifact;
  return {
    target: launch,
    artifact: {
      ...known,
      observed,
      ...(pinned === undefined ? {} : { comparison: compareArtifacts(pinned, observed) }),
    },
  };
}

/**
 * An HTTP upstream's artifact as `check` and `approve` see it: what it stated while listed (its
 * `serverInfo`), compared with the pin by value (low severity: what a server says, not what runs).
 */
function statedLiveArtifact(server: ServerConfig, live: LiveCatalog): LiveArtifact {
  const pinned = server.pin.artifact;
  const known = pinned === undefined ? {} : { pinned };
  const recorded = recordableServer(statedServerInfo(live.serverInfo));
  if ('problem' in recorded) return { ...known, problem: recorded.problem };
  const observed = recorded.artifact;
  return {
    ...known,
    observed,
    ...(pinned === undefined ? {} : { comparison: compareArtifacts(pinned, observed) }),
  };
}

/** Which surfaces beside tools a pin pins. */
export function pinnedSurfaces(server: ServerConfig): SurfaceChoice {
  return {
    prompts: server.pin.prompts !== undefined,
    resourceTemplates: server.pin.resourceTemplates !== undefined,
    instructions: server.pin.instructions !== undefined,
  };
}

function targetOf(server: ServerConfig, headers: Readonly<Record<string, string>>): LiveTarget {
  const { upstream } = server;
  if (isStdioUpstream(upstream)) return upstream;
  // The pin's recorded transport, never 'auto': the catalog is compared over what was approved.
  const oauth = upstreamOAuthOf(server);
  return {
    ...upstream,
    headers: { ...upstream.headers, ...headers },
    ...(oauth === undefined ? {} : { oauth }),
  };
}

/**
 * Lists the live catalog of a pin file's server (pin headers plus `headers`), and every other
 * surface the pin pins, and explains how each differs from the pin. Rejects with GatewayError GW_CATALOG_UNAVAILABLE
 * (server down, listing incomplete: nothing can be told).
 */
export async function comparePinWithLive(
  pinFile: { readonly file: string; readonly text: string; readonly server: ServerConfig },
  headers: Readonly<Record<string, string>>,
  options: { readonly timeoutMs: number; readonly capabilities?: Record<string, unknown> | undefined },
): Promise<PinnedLiveCatalog> {
  const { file, text, server } = pinFile;
  const choice = pinnedSurfaces(server);
  const surfaces = (['prompts', 'resourceTemplates'] as const).filter((surface) => choice[surface]);
  // Listed as it was pinned: with the capabilities the pin records, unless others are given.
  const capabilities = options.capabilities ?? server.clientCapabilities;
  const { target, artifact: launched } = await liveArtifactOf(
    server,
    targetOf(server, headers),
    dirname(file),
  );
  // The listing clients (both SDKs') load with the first listing: a gateway whose review page never
  // lists live does not carry them.
  const { fetchLiveCatalog } = await import('./fetchLiveCatalog.js');
  const live = await fetchLiveCatalog(target, {
    timeoutMs: options.timeoutMs,
    baseDir: dirname(file),
    surfaces,
    ...(capabilities === undefined ? {} : { capabilities: { ...capabilities } }),
  });
  const artifact = 'url' in target ? statedLiveArtifact(server, live) : launched;
  const observed = observeLive(live, server.profile, choice);
  const explanation = explainPinDrift(server, observed);
  const surfacePages: Partial<Record<PinnedSurface, number>> = {};
  for (const surface of surfaces) surfacePages[surface] = live.surfaces[surface]?.pages ?? 0;
  // Only what the server offers is worth a note: a server without prompts leaves nothing unpinned.
  const notPinned = (['prompts', 'resourceTemplates', 'instructions'] as const).filter((surface) =>
    choice[surface]
      ? false
      : surface === 'instructions'
        ? live.instructions !== undefined
        : live.offered.includes(surface),
  );
  return {
    file,
    text,
    server,
    observed,
    explanation,
    pages: live.pages,
    surfaces: explainSurfaces(server, observed),
    surfacePages,
    notPinned,
    ...(artifact === undefined ? {} : { artifact }),
  };
}
