import type { PinnedArtifact } from '../config/types.js';
import { escapeInvisible } from '../explain/escapeInvisible.js';

/** How a pinned artifact compares with the one observed: equal, or `artifact_drifted` from → to. */
export type ArtifactComparison =
  | { readonly equal: true }
  | {
      readonly equal: false;
      readonly reason: 'artifact_drifted';
      readonly from: PinnedArtifact;
      readonly to: PinnedArtifact;
      /** An HTTP server's stated name and version is low (what it says, not what runs); any other change high. */
      readonly severity: 'high' | 'low';
      /** One line, `old -> new`. */
      readonly summary: string;
    };

// The members that identify each kind (what a signature of the code is); nothing else is compared.
const IDENTITY: { readonly [K in PinnedArtifact['kind']]: readonly string[] } = {
  npm: ['package', 'version', 'integrity'],
  file: ['path', 'sha256'],
  docker: ['image', 'id'],
  server: ['name', 'version'],
};

/** Compares the pinned artifact with the observed one, member by member of its kind. */
export function compareArtifacts(pinned: PinnedArtifact, observed: PinnedArtifact): ArtifactComparison {
  const same =
    pinned.kind === observed.kind &&
    IDENTITY[pinned.kind].every(
      (member) =>
        (pinned as unknown as Record<string, unknown>)[member] ===
        (observed as unknown as Record<string, unknown>)[member],
    );
  if (same) return { equal: true };
  return {
    equal: false,
    reason: 'artifact_drifted',
    from: pinned,
    to: observed,
    severity: pinned.kind === 'server' && observed.kind === 'server' ? 'low' : 'high',
    summary: `${describeArtifact(pinned)} -> ${describeArtifact(observed)}`,
  };
}

/** One line naming an artifact: `npm @scope/pkg@1.2.3 (sha512-abcd…)`, `file /srv/x.js (sha256:…)`. */
export function describeArtifact(artifact: PinnedArtifact): string {
  switch (artifact.kind) {
    case 'npm':
      return `npm ${artifact.package}@${artifact.version} (${shorten(artifact.integrity)})`;
    case 'file':
      return `file ${artifact.path} (${shorten(artifact.sha256)})`;
    case 'docker':
      return `docker ${artifact.image} (${shorten(artifact.id)})`;
    case 'server':
      // What a server states is its own text: shown with its invisible characters escaped.
      return `server ${escapeInvisible(JSON.stringify(artifact.name))} version ${escapeInvisible(JSON.stringify(artifact.version))}`;
  }
}

// Enough of a digest to tell two apart on a terminal line; the log event carries them whole.
function shorten(digest: string): string {
  return digest.length > 23 ? `${digest.slice(0, 22)}…` : digest;
}
