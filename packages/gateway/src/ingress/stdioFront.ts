import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { dirname, isAbsolute } from 'node:path';
import type { PrincipalConfig, ServerConfig, UpstreamConfig } from '../config/index.js';
import { keyForPrincipal } from '../policy/sessionPrincipal.js';
import { ScopeTable } from '../state/scopeTable.js';
import { ServerCheckpoint } from '../checkpoint/serverCheckpoint.js';
import { Alerts } from '../observe/alerts.js';
import { ClientNotices } from '../observe/clientNotices.js';
import type { GatewayLogger } from '../observe/logger.js';
import { SessionStore } from '../state/sessionStore.js';
import { sessionLabel } from '../observe/sessionLabel.js';
import { StdioFrontTransport } from './stdioFrontTransport.js';
import { ToolDigester } from '../state/toolDigester.js';
import { MessageBridge, type BridgeEnd } from '../transports/messageBridge.js';
import { openUpstream } from '../transports/openUpstream.js';
import { upstreamOAuthOf } from '../transports/upstreamOAuth.js';
import { artifactOption } from '../transports/verifyArtifact.js';
import { DEFAULT_STREAM_IDLE_MS, DEFAULT_TIMEOUT_MS } from '../defaults.js';

/** Options of {@link runStdioFront}. */
export interface StdioFrontOptions {
  /** The server's pin (its `upstream` is used unless `command` is given). */
  readonly server: ServerConfig;
  /** The stdio server to run instead of the pin's upstream: `[program, ...args]`. */
  readonly command?: readonly string[];
  /** Where logs and alerts go: stderr or a file, never the MCP channel on stdout. */
  readonly logger: GatewayLogger;
  /** @default process.stdin */
  readonly input?: Readable;
  /** @default process.stdout */
  readonly output?: Writable;
  /** Bound on each tools/list the gateway sends itself (fetch on miss). @default 30000 */
  readonly timeoutMs?: number;
  /**
   * Silence allowed from the upstream while it owes answers: past it, each request it has not
   * answered gets -32041 `timeout`. @default 300000 (the gateway's `limits.streamIdleMs` default)
   */
  readonly streamIdleMs?: number;
  /**
   * A gateway file's `principals` block (`toolpin wrap --principals`, docs/scopes.md): the local
   * user is the principal whose `local` names them (or says `true`); none: every item is out of scope.
   */
  readonly principals?: readonly PrincipalConfig[];
  /** The local user, as `local` names them. @default os.userInfo().username */
  readonly localUser?: string;
}

/** A running stdio front. */
export interface StdioFront {
  /** The server's checkpoint (`replaceConfig` puts a new pin in force). */
  readonly checkpoint: ServerCheckpoint;
  /** @deprecated The same object as `checkpoint` (its earlier name). */
  readonly guard: ServerCheckpoint;
  /** Resolves when the session ended, with who ended it (`client`: stdin closed). */
  readonly ended: Promise<BridgeEnd>;
  /** Ends the session (the upstream child is stopped). */
  close(): Promise<void>;
}

/**
 * The session key of the one client a stdio front serves: one per front, so the logs of two
 * `wrap` runs (two desktop sessions, two servers) never share a session label.
 */
function stdioSession(options: StdioFrontOptions, scopes: ScopeTable): string {
  const key = `stdio:${randomUUID()}`;
  const table = scopes.scopes;
  if (table === undefined) return key;
  const localUser = options.localUser ?? userInfo().username;
  const principal = table.resolve({ localUser });
  if (principal === undefined)
    options.logger.warn(
      { event: 'principal.unresolved', server: options.server.name, evidence: ['localUser'] },
      'the local user matches no principal: every item is out of scope',
    );
  return keyForPrincipal(principal, key);
}

/** The upstream of a stdio front: `command` when given, else the pin's upstream (with its OAuth client when `auth.mode: client`). */
function openFrontUpstream(
  options: StdioFrontOptions,
  upstreamConfig: UpstreamConfig,
): ReturnType<typeof openUpstream> {
  const { server, logger } = options;
  // `auth.mode: client`: the upstream's bearer comes from the token store (toolpin login).
  const oauth =
    options.command === undefined || options.command.length === 0 ? upstreamOAuthOf(server) : undefined;
  return openUpstream(upstreamConfig, {
    logger,
    server: server.name,
    session: 'stdio',
    ...(oauth === undefined ? {} : { oauth }),
    // A desktop client sets the server's environment on toolpin's own launch: pass it all on.
    inheritEnv: true,
    ...(options.command === undefined && isAbsolute(server.file) ? { baseDir: dirname(server.file) } : {}),
    // A command given instead of the pin's upstream is held to the pinned artifact all the same.
    ...artifactOption(server),
  });
}

/** The client side: wrap's stdin and stdout, read by the gateway's own line parser. */
function clientTransport(
  options: StdioFrontOptions,
  input: Readable,
  sessionKey: string,
): StdioFrontTransport {
  return new StdioFrontTransport({
    input,
    output: options.output ?? process.stdout,
    logger: options.logger,
    fields: { server: options.server.name, session: sessionLabel(sessionKey) },
  });
}

/**
 * Runs toolpin as a stdio MCP server (what `toolpin wrap` does): the client is whoever speaks on
 * stdin/stdout, the upstream is `command` (a child) or the pin's upstream, and the server's pin is
 * enforced between them exactly as on the HTTP fronts.
 */
export async function runStdioFront(options: StdioFrontOptions): Promise<StdioFront> {
  const { server, logger } = options;
  const upstreamConfig: UpstreamConfig =
    options.command === undefined || options.command.length === 0
      ? server.upstream
      : { command: options.command as [string, ...string[]], args: [], env: {} };
  const scopes = new ScopeTable(options.principals);
  const checkpoint = new ServerCheckpoint({
    config: { ...server, upstream: upstreamConfig },
    sessions: new SessionStore({ max: 4 }),
    digester: new ToolDigester(),
    alerts: new Alerts(logger),
    logger,
    scopes,
  });
  const input = options.input ?? process.stdin;
  const sessionKey = stdioSession(options, scopes);
  const client = clientTransport(options, input, sessionKey);
  const upstream = openFrontUpstream(options, upstreamConfig);
  const notices = new ClientNotices({
    server: server.name,
    pinFile: server.file,
    send: (notice) => bridge.notify(notice),
  });
  checkpoint.alerts.addSink(notices.sink);
  const bridge = new MessageBridge({
    notices,
    checkpoint,
    sessionKey,
    client,
    front: 'stdio',
    upstream,
    logger,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    streamIdleMs: options.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS,
    // The client's stdout is a pipe: a client that reads slowly holds the upstream back, and one
    // that does not read what the gateway answers itself is held back too.
    clientPipe: client,
  });
  const ended = new Promise<BridgeEnd>((resolve) => {
    bridge.onclose = resolve;
  });
  // The SDK's stdio server transport does not notice the end of stdin; the client leaving is that.
  const onEnd = (): void => void bridge.close('client');
  input.once('end', onEnd);
  input.once('close', onEnd);
  await bridge.start();
  logger.info(
    { event: 'wrap.started', server: server.name, mode: server.mode },
    'toolpin wrap: serving MCP on stdio',
  );
  return {
    checkpoint,
    guard: checkpoint,
    ended: ended.finally(() => {
      input.off('end', onEnd);
      input.off('close', onEnd);
    }),
    close: () => bridge.close(),
  };
}
