import { loadPinFile, type ServerConfig } from '../config/index.js';
import { ExitCodes } from '../defaults.js';
import { GatewayError } from '../errors.js';
import type { GatewayLogger } from '../observe/logger.js';
import { upstreamOAuthOf } from '../transports/upstreamOAuth.js';
import type { CliIo } from './cliIo.js';
import { runLogin } from './loginCommand.js';
import { canOpenBrowser } from './openBrowser.js';

/** True when the server's upstream refuses for want of a login (no token, or none that refreshes). */
async function loginRequired(server: ServerConfig): Promise<boolean> {
  const oauth = upstreamOAuthOf(server);
  if (oauth === undefined) return false;
  try {
    await oauth.accessToken();
    return false;
  } catch (error) {
    // Any other refusal (metadata, issuer drift) is the front's to answer, fail closed, with its reason.
    return error instanceof GatewayError && error.data.reason === 'login_required';
  }
}

/**
 * Before `wrap` serves a pin of `auth.mode: client` with no usable token: where a browser can
 * open, runs `toolpin login` itself (its output on stderr: stdout is the MCP channel) and resolves
 * with the pin as reloaded (login records auth.issuer); else says on stderr what to run, and the
 * client's requests are answered -32041 naming the same command. Resolves with the pin to serve.
 */
export async function loginBeforeWrap(
  server: ServerConfig,
  logger: GatewayLogger,
  io: CliIo,
): Promise<ServerConfig> {
  if (!(await loginRequired(server))) return server;
  const run = `toolpin login ${server.file}`;
  if (!canOpenBrowser()) {
    logger.warn(
      { event: 'wrap.login_required', server: server.name, file: server.file },
      `server ${server.name} has no OAuth token and no browser can open here; run: ${run}`,
    );
    return server;
  }
  logger.info(
    { event: 'wrap.login', server: server.name, file: server.file },
    `server ${server.name} has no OAuth token: logging in in the browser (${run})`,
  );
  const code = await runLogin({ file: server.file }, { ...io, stdout: io.stderr });
  if (code !== ExitCodes.OK) {
    logger.warn(
      { event: 'wrap.login_required', server: server.name, file: server.file },
      `server ${server.name}: the login did not complete; run: ${run}`,
    );
    return server;
  }
  return loadPinFile(server.file);
}
