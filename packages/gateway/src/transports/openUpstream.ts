import { resolve } from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isStdioUpstream, type UpstreamConfig } from '../config/index.js';
import type { GatewayLogger } from '../observe/logger.js';
import { bearerFetch, type BearerReport } from './bearerFetch.js';
import { checkedFetch } from './checkedFetch.js';
import type { UpstreamOAuth } from './upstreamOAuth.js';
import { LegacySseClientTransport, LegacySseStreamError } from './legacySseClient.js';
import { StdioChildTransport } from './stdioChildTransport.js';
import { logInvalidMessage } from '../observe/invalidMessage.js';
import { verifyArtifact, type ArtifactCheck } from './verifyArtifact.js';
import { childEnvironment } from './childEnvironment.js';

/** Options of {@link openUpstream}. */
export interface OpenUpstreamOptions {
  readonly logger: GatewayLogger;
  /** Server name and session label, tagged on the child's stderr lines. */
  readonly server: string;
  readonly session: string;
  /** Client headers to pass on to an HTTP upstream (credentials), beside the pin's own headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * stdio: the child gets this process's whole environment (plus the pin's `env`), as a desktop
   * client's own launch would. By default it gets only PATH, HOME and the like, so the gateway's
   * secrets do not leak into every server it runs.
   */
  readonly inheritEnv?: boolean;
  /** stdio: a relative `cwd` is resolved against this folder (the pin file's). */
  readonly baseDir?: string;
  /** stdio: see StdioChildOptions.graceMs. */
  readonly graceMs?: number;
  /** Streamable HTTP of a pin with `auth.mode: client`: its bearer comes from here (see bearerFetch). */
  readonly oauth?: UpstreamOAuth;
  /** HTTP+SSE: bound on opening the stream and receiving its endpoint event. @default 30000 */
  readonly timeoutMs?: number;
  /** stdio: the pinned artifact the child is verified against before it starts (see verifyArtifact). */
  readonly artifact?: Omit<ArtifactCheck, 'logger' | 'server' | 'session'>;
}

/**
 * Reading a peer stopped and restarted: a client that reads slowly holds the upstream back (and,
 * under wrap, one that does not read the gateway's own answers is held back itself).
 */
export interface PeerReading {
  /** Stops reading what the peer sends (it waits, as it would on a slow reader of its own). */
  pauseReading(): void;
  /** Reads it again. */
  resumeReading(): void;
}

/** A transport to the upstream, not yet started, and what of its errors ends the connection. */
export interface UpstreamConnection {
  readonly transport: Transport;
  /** True when an error reported after start means the upstream connection is gone. */
  isFatal(error: Error): boolean;
  /**
   * How to hold the upstream back (a stdio child, an HTTP+SSE stream); absent when it cannot be
   * (the SDK's Streamable HTTP client reads its streams itself).
   */
  readonly reading?: PeerReading;
}

/**
 * Opens the upstream side of a bridged session: a child speaking stdio, a Streamable HTTP client,
 * or a 2024-11-05 HTTP+SSE client, by the pin's `upstream`.
 */
export function openUpstream(upstream: UpstreamConfig, options: OpenUpstreamOptions): UpstreamConnection {
  if (isStdioUpstream(upstream)) {
    const transport = openStdioChild(upstream, {
      ...(options.inheritEnv === undefined ? {} : { inheritEnv: options.inheritEnv }),
      ...(options.baseDir === undefined ? {} : { baseDir: options.baseDir }),
      ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      ...(options.artifact === undefined
        ? {}
        : {
            artifact: {
              ...options.artifact,
              logger: options.logger,
              server: options.server,
              session: options.session,
            },
          }),
      onStderrLine: (line) =>
        options.logger.info(
          { event: 'upstream.stderr', server: options.server, session: options.session, line },
          'upstream stderr',
        ),
    });
    return { transport, isFatal: () => false, reading: transport };
  }
  const requestInit = { headers: { ...options.headers, ...upstream.headers } };
  if (upstream.transport === 'sse') {
    // The gateway's own HTTP+SSE client: every event parsed here, none dropped by a schema unseen.
    const transport = new LegacySseClientTransport(new URL(upstream.url), {
      headers: requestInit.headers,
      ...(options.timeoutMs === undefined ? {} : { startTimeoutMs: options.timeoutMs }),
    });
    // A broken stream is not reconnected (a new upstream session would be uninitialized): it ends.
    return { transport, isFatal: (error) => error instanceof LegacySseStreamError, reading: transport };
  }
  // The SDK's client reads what the gateway parsed, checked and re-serialized (checkedFetch).
  const checked = checkedFetch(
    {
      server: options.server,
      onInvalid: (invalid, answered) =>
        logInvalidMessage(
          options.logger,
          { server: options.server, session: options.session },
          invalid,
          answered,
        ),
    },
    options.oauth === undefined ? fetch : bearerFetch(options.oauth, fetch, oauthReport(options)),
  );
  return {
    transport: new StreamableHTTPClientTransport(new URL(upstream.url), { requestInit, fetch: checked }),
    isFatal: () => false,
  };
}

/** The log lines of the client mode's bearer: `upstream.oauth_refreshed` (info), `upstream.auth_refused` (warn, `reason`). */
function oauthReport(options: OpenUpstreamOptions): BearerReport {
  const fields = { server: options.server, session: options.session };
  return (what, reason) => {
    if (what === 'refreshed')
      options.logger.info({ event: 'upstream.oauth_refreshed', ...fields }, 'OAuth token refreshed');
    else
      options.logger.warn(
        { event: 'upstream.auth_refused', ...fields, reason },
        'request not sent: no usable OAuth token (toolpin login)',
      );
  };
}

/** A command to run over stdio, as a pin file or `toolpin pin --command` gives it. */
export interface StdioLaunch {
  /** The program and its first arguments. */
  readonly command: readonly string[];
  /** Arguments after `command`. */
  readonly args?: readonly string[];
  /** Added to the SDK's default child environment (PATH, HOME, …), or to this process's when inherited. */
  readonly env?: Readonly<Record<string, string>>;
  /** Variables passed on by name from this process's environment (those it has), under `env`. */
  readonly passEnv?: readonly string[];
  /** Working directory; a relative one is resolved against `baseDir`. */
  readonly cwd?: string;
}

/** Options of {@link openStdioChild}. */
export interface StdioChildLaunchOptions {
  /** Pass this process's whole environment, not only PATH, HOME and the like. @default false */
  readonly inheritEnv?: boolean;
  /** A relative `cwd` is resolved against this folder (the pin file's). @default process.cwd() */
  readonly baseDir?: string;
  /** See StdioChildOptions.graceMs. */
  readonly graceMs?: number;
  /** Receives each line the child writes on stderr. */
  readonly onStderrLine: (line: string) => void;
  /** Verify the command's artifact against this pin before the child starts (see verifyArtifact). */
  readonly artifact?: ArtifactCheck;
}

/**
 * The one way a stdio upstream is started, for the gateway and the CLI alike: the program and its
 * arguments, an environment of the SDK's defaults (or this process's, when asked) plus the
 * variables the pin's `passEnv` names and the pin's `env`, a `cwd` resolved against the pin file's folder, in its own process group. Not started yet.
 */
export function openStdioChild(launch: StdioLaunch, options: StdioChildLaunchOptions): StdioChildTransport {
  const [command = '', ...first] = launch.command;
  const args = [...first, ...(launch.args ?? [])];
  const env = childEnvironment(launch.env, options.inheritEnv, launch.passEnv);
  const cwd = launch.cwd === undefined ? undefined : resolve(options.baseDir ?? process.cwd(), launch.cwd);
  const { artifact } = options;
  return new StdioChildTransport({
    command,
    args,
    env,
    ...(cwd === undefined ? {} : { cwd }),
    ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
    ...(artifact === undefined
      ? {}
      : { prepare: () => verifyArtifact([command, ...args], artifact, { env, cwd: cwd ?? process.cwd() }) }),
    onStderrLine: options.onStderrLine,
  });
}
