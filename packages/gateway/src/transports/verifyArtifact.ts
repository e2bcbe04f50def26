import type { Mode, PinnedArtifact } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { GatewayLogger } from '../observe/logger.js';
import { compareArtifacts, describeArtifact } from '../policy/artifactDrift.js';
import { resolveArtifact, type ResolveArtifactOptions } from './resolveArtifact.js';

/** The pinned artifact a stdio child is checked against before it starts, and who reports it. */
export interface ArtifactCheck {
  readonly pinned: PinnedArtifact;
  readonly mode: Mode;
  readonly server: string;
  readonly session: string;
  /** The pin file, named in the refusal (`toolpin approve <file>`). */
  readonly file: string;
  readonly logger: GatewayLogger;
}

/**
 * Resolves what `argv` runs and checks it against the pin before the child starts. Returns the
 * argv to run: the exact pinned artifact (`pkg@1.2.3`, the image id) when it matches. In enforce
 * mode a different artifact rejects with GW_ARTIFACT_DRIFTED, one that cannot be resolved with
 * GW_ARTIFACT_UNVERIFIABLE; monitor mode logs the same and runs what the command resolves to.
 */
export async function verifyArtifact(
  argv: readonly string[],
  check: ArtifactCheck,
  options: ResolveArtifactOptions,
): Promise<readonly string[]> {
  const { logger, server, session, mode } = check;
  const action = mode === 'enforce' ? 'refused' : 'flagged';
  const resolution = await resolveArtifact(argv, options);
  if (!resolution.ok) {
    logger.error(
      { event: 'upstream.artifact_unverifiable', server, session, action, problem: resolution.problem },
      'the artifact of the upstream cannot be verified',
    );
    if (mode === 'monitor') return argv;
    throw new GatewayError(
      'GW_ARTIFACT_UNVERIFIABLE',
      `artifact_unverifiable: ${resolution.problem}; the pin records ${describeArtifact(check.pinned)}`,
      { server, reason: 'artifact_unverifiable', problem: resolution.problem },
    );
  }
  const comparison = compareArtifacts(check.pinned, resolution.artifact);
  if (comparison.equal) {
    logger.info(
      {
        event: 'upstream.artifact_verified',
        server,
        session,
        artifact: resolution.artifact,
        note: resolution.note,
      },
      'the artifact of the upstream is the pinned one',
    );
    return resolution.argv;
  }
  logger.error(
    {
      event: 'upstream.artifact_drifted',
      server,
      session,
      action,
      reason: comparison.reason,
      pinned: comparison.from,
      observed: comparison.to,
      summary: comparison.summary,
      note: resolution.note,
    },
    'the artifact of the upstream is not the pinned one',
  );
  if (mode === 'monitor') return resolution.argv;
  throw new GatewayError(
    'GW_ARTIFACT_DRIFTED',
    `artifact_drifted: ${comparison.summary}${resolution.note === undefined ? '' : ` (${resolution.note})`}; review it, then toolpin approve ${check.file}`,
    { server, reason: 'artifact_drifted', pinned: comparison.from, observed: comparison.to },
  );
}

/**
 * The artifact check of a pin's stdio upstream: `{ artifact }` for openUpstream when the pin
 * records a package, file or image (an HTTP server's stated artifact is checked by the checkpoint).
 */
export function artifactOption(server: {
  readonly pin: { readonly artifact?: PinnedArtifact };
  readonly mode: Mode;
  readonly file: string;
}): { artifact?: Omit<ArtifactCheck, 'logger' | 'server' | 'session'> } {
  const pinned = server.pin.artifact;
  if (pinned === undefined || pinned.kind === 'server') return {};
  return { artifact: { pinned, mode: server.mode, file: server.file } };
}
