import { resolve } from 'node:path';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isStdioUpstream, type UpstreamConfig } from '../config/index.js';
import type { GatewayLogger } from '../observe/logger.js';
import { StdioChildTransport } from './stdioChildTransport.js';

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
}

/** A transport to the upstream, not yet started, and what of its errors ends the connection. */
export interface UpstreamConnection {
  readonly transport: Transport;
  /** True when an error reported after start means the upstream connection is gone. */
  isFatal(error: Error): boolean;
}

/**
 * Opens the upstream side of a bridged session: a child speaking stdio, a Streamable HTTP client,
 * or a 2024-11-05 HTTP+SSE client, by the pin's `upstream`.
 */
export function openUpstream(upstream: UpstreamConfig, options: OpenUpstreamOptions): UpstreamConnection {
  if (isStdioUpstream(upstream)) {
    const [command, ...first] = upstream.command;
    const base = options.inheritEnv === true ? definedEnv(process.env) : getDefaultEnvironment();
    const transport = new StdioChildTransport({
      command,
      args: [...first, ...upstream.args],
      env: { ...base, ...upstream.env },
      ...(upstream.cwd === undefined ? {} : { cwd: resolve(options.baseDir ?? process.cwd(), upstream.cwd) }),
      ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      onStderrLine: (line) =>
        options.logger.info(
          { event: 'upstream.stderr', server: options.server, session: options.session, line },
          'upstream stderr',
        ),
    });
    return { transport, isFatal: () => false };
  }
  const requestInit = { headers: { ...options.headers, ...upstream.headers } };
  if (upstream.transport === 'sse') {
    const transport = new SSEClientTransport(new URL(upstream.url), { requestInit });
    // The event source would reconnect into a new, uninitialized upstream session: end instead.
    return { transport, isFatal: (error) => error instanceof SseError };
  }
  return {
    transport: new StreamableHTTPClientTransport(new URL(upstream.url), { requestInit }),
    isFatal: () => false,
  };
}

function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}
