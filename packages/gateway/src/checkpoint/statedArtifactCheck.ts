import type { ServerConfig } from '../config/index.js';
import type { GatewayLogger } from '../observe/logger.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import { judgeStatedServers, statedServers, type StatedArtifactVerdict } from '../policy/statedArtifact.js';
import { isObject } from '../wire/isObject.js';

/** A stated identity the pin's drift policy refuses (see {@link checkStatedArtifact}). */
export type RefusedStatedArtifact = Extract<StatedArtifactVerdict, { kind: 'drifted' }>;

/**
 * Judges what an `initialize` or `server/discover` result states of an HTTP upstream (its
 * `serverInfo`, docs/pin-lifecycle.md#the-artifact) against the pin's `{kind: server}` artifact, and
 * logs the outcome: `upstream.artifact_verified` (info) or `upstream.artifact_drifted` (old -> new;
 * warn when flagged, error when refused). Returns the verdict when it is refused, else undefined
 * (a pin without such an artifact judges nothing). `via`: the request whose answer stated it.
 */
export function checkStatedArtifact(
  config: ServerConfig,
  logger: GatewayLogger,
  sessionKey: string,
  result: unknown,
  via: string,
): RefusedStatedArtifact | undefined {
  if (config.pin.artifact?.kind !== 'server' || !isObject(result)) return undefined;
  const verdict = judgeStatedServers(config, statedServers(result));
  if (verdict === undefined) return undefined;
  const fields = { server: config.name, session: sessionLabel(sessionKey), via };
  if (verdict.kind === 'verified') {
    logger.info(
      { event: 'upstream.artifact_verified', ...fields, artifact: verdict.artifact },
      'the server states the pinned name and version',
    );
    return undefined;
  }
  const refused = verdict.action === 'refused';
  logger[refused ? 'error' : 'warn'](
    {
      event: 'upstream.artifact_drifted',
      ...fields,
      action: verdict.action,
      reason: verdict.reason,
      severity: verdict.severity,
      pinned: verdict.pinned,
      observed: verdict.observed,
      summary: verdict.summary,
    },
    'the server does not state the pinned name and version',
  );
  return refused ? verdict : undefined;
}

/**
 * How a refused stated identity is said on every front: the message (naming the file to approve)
 * and the `data` of its `-32040` (or of `GW_ARTIFACT_DRIFTED` where the gateway closes the upstream).
 */
export function statedArtifactRefusal(
  verdict: RefusedStatedArtifact,
  config: { readonly name: string; readonly file: string },
): {
  readonly message: string;
  readonly data: {
    readonly reason: 'artifact_drifted';
    readonly server: string;
    readonly pinned: RefusedStatedArtifact['pinned'];
    readonly observed: RefusedStatedArtifact['observed'];
  };
} {
  return {
    message: `toolpin blocked the server: artifact_drifted: ${verdict.summary}; review it, then toolpin approve ${config.file}`,
    data: {
      reason: 'artifact_drifted',
      server: config.name,
      pinned: verdict.pinned,
      observed: verdict.observed,
    },
  };
}
