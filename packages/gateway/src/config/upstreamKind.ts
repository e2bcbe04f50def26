import { GatewayError } from '../errors.js';
import { REDACTED, redactUrl } from '../wire/redactUrl.js';
import type { HttpUpstreamConfig, ServerConfig, StdioUpstreamConfig, UpstreamConfig } from './types.js';

/** True for an upstream the gateway spawns (pin file `upstream.command`). */
export function isStdioUpstream(upstream: UpstreamConfig): upstream is StdioUpstreamConfig {
  return 'command' in upstream;
}

/** The HTTP upstream of a server; throws GW_UPSTREAM_KIND when the pin names a command instead. */
export function httpUpstreamOf(server: Pick<ServerConfig, 'name' | 'upstream'>): HttpUpstreamConfig {
  if (isStdioUpstream(server.upstream)) {
    throw new GatewayError(
      'GW_UPSTREAM_KIND',
      `server ${server.name}: this front needs an HTTP upstream (upstream.url), not a command`,
      {
        server: server.name,
      },
    );
  }
  return server.upstream;
}

/**
 * What identifies a running upstream: a pin reload that keeps it only swaps the pin; one that
 * changes it rebuilds the route (new connections, new children).
 */
export function upstreamIdentity(upstream: UpstreamConfig): string {
  if (isStdioUpstream(upstream)) {
    const passEnv = [...(upstream.passEnv ?? [])].sort();
    return JSON.stringify([
      'stdio',
      upstream.command,
      upstream.args,
      upstream.env,
      passEnv,
      upstream.cwd ?? null,
    ]);
  }
  // Headers too: the proxy sends the headers it was built with, so new ones need a new route.
  return JSON.stringify(['http', upstream.url, upstream.transport, upstream.headers]);
}

/**
 * A description fit for logs and status output: the URL with its credentials redacted (redactUrl;
 * userinfo moved into a header still shows as `[redacted]@`), or the program (never env values or
 * arguments, which may hold secrets).
 */
export function describeUpstream(upstream: UpstreamConfig): string {
  return isStdioUpstream(upstream)
    ? `stdio:${upstream.command[0]}`
    : describeUpstreamUrl(upstream.url, upstream.authorizationFromUrl === true);
}

/** An upstream URL for logs: redacted, with `[redacted]@` where its userinfo was moved into a header. */
export function describeUpstreamUrl(url: string, authorizationFromUrl: boolean): string {
  const shown = redactUrl(url);
  return authorizationFromUrl ? shown.replace('://', `://${REDACTED}@`) : shown;
}
