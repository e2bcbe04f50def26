import { openBrowser } from './openBrowser.js';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Command } from 'commander';
import type { ClientAuthConfig } from '../config/authSchema.js';
import { isStdioUpstream, type ServerConfig } from '../config/index.js';
import { recordAuthIssuer } from '../config/recordAuthIssuer.js';
import { DEFAULT_LOGIN_TIMEOUT_MS, ExitCodes } from '../defaults.js';
import { GatewayError } from '../errors.js';
import { UpstreamOAuth, sameIssuer, type UpstreamDiscovery } from '../transports/upstreamOAuth.js';
import type { CliIo } from './cliIo.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import { parseTimeout } from './commonOptions.js';
import { listenForRedirect } from './loopbackRedirect.js';
import { readPinFileForCli } from './readPinFileForCli.js';

/** Options of {@link runLogin}, as given on the command line. */
export interface LoginCommandOptions {
  /** The server's pin file (`auth.mode: client`, or no auth block: login adds one). */
  readonly file: string;
  /** false: only print the authorization URL (`--no-browser`). @default true */
  readonly browser?: boolean;
  /** How long to wait for the browser's redirect, in ms (a string from the command line). @default 300000 */
  readonly timeout?: string;
}

/** The client-mode auth of a pin: its `auth` block, or client mode with nothing set when it has none. */
function clientAuthOf(server: ServerConfig): ClientAuthConfig {
  if (isStdioUpstream(server.upstream))
    throw new CliInputError(
      `${server.file}: toolpin login is for an HTTP upstream (upstream.url), not a command`,
    );
  const { auth: config } = server;
  if (config === undefined) return { mode: 'client' };
  if (config.mode !== 'client')
    throw new CliInputError(
      `${server.file}: auth.mode is ${config.mode}; toolpin login is for auth.mode: client`,
    );
  return config;
}

/** The browser step: authorization URL shown, redirect awaited, code exchanged; tokens land in the store. */
async function authorize(
  oauth: UpstreamOAuth,
  discovery: UpstreamDiscovery,
  options: { readonly browser: boolean; readonly timeoutMs: number; readonly port: number },
  io: CliIo,
): Promise<void> {
  const redirect = await listenForRedirect(options.port);
  try {
    const provider = oauth.provider(discovery, redirect.redirectUrl, 'login', (url) => {
      io.stdout.write(`Open this URL in a browser to authorize toolpin:\n${url.href}\n`);
      if (options.browser) openBrowser(url.href);
    });
    const code = redirect.code(provider.expectedState, options.timeoutMs);
    code.catch(() => undefined);
    const scope = oauth.scope(discovery);
    const common = {
      serverUrl: oauth.options.url,
      fetchFn: oauth.fetch,
      ...(scope === undefined ? {} : { scope }),
      ...(discovery.resourceMetadataUrl === undefined
        ? {}
        : { resourceMetadataUrl: new URL(discovery.resourceMetadataUrl) }),
    };
    if ((await auth(provider, common)) === 'AUTHORIZED') return;
    const result = await auth(provider, { ...common, authorizationCode: await code });
    if (result !== 'AUTHORIZED') throw new Error('the authorization server did not issue a token');
  } finally {
    await redirect.close();
  }
}

async function login(options: LoginCommandOptions, io: CliIo): Promise<number> {
  const timeoutMs = parseTimeout(options.timeout, DEFAULT_LOGIN_TIMEOUT_MS);
  const pinFile = await readPinFileForCli(options.file);
  const { server } = pinFile;
  const config = clientAuthOf(server);
  const oauth = new UpstreamOAuth({
    server: server.name,
    pinFile: pinFile.file,
    url: (server.upstream as { url: string }).url,
    auth: config,
  });
  const discovery = await oauth.discover(await oauth.challenge());
  io.stderr.write(
    `${server.name}: protected resource ${discovery.resourceMetadata?.resource ?? oauth.options.url}, authorization server ${discovery.issuer}\n`,
  );
  await authorize(
    oauth,
    discovery,
    { browser: options.browser !== false, timeoutMs, port: config.redirectPort ?? 0 },
    io,
  );
  if (
    config.issuer === undefined ||
    !sameIssuer(config.issuer, discovery.issuer) ||
    server.auth === undefined
  ) {
    await recordAuthIssuer(pinFile.file, discovery.issuer, pinFile.text);
    io.stderr.write(`${pinFile.file}: recorded auth.issuer ${discovery.issuer}\n`);
  }
  io.stderr.write(
    `${server.name}: logged in; the token is stored in ${oauth.store.file} (never in the pin file)\n`,
  );
  return ExitCodes.OK;
}

/**
 * `toolpin login <pin-file>`: runs the OAuth browser step once for a server of `auth.mode: client`
 * (the upstream's metadata validated, PKCE, a client ID metadata document or dynamic registration,
 * a redirect to 127.0.0.1), stores its tokens in the token store and records the authorization
 * server in the pin's `auth.issuer`. Exit 0 logged in, 2 bad input or refused.
 */
export async function runLogin(options: LoginCommandOptions, io: CliIo): Promise<number> {
  try {
    return await login(options, io);
  } catch (error) {
    if (error instanceof GatewayError) {
      io.stderr.write(`toolpin login: ${error.code}: ${error.message}\n`);
      return ExitCodes.BAD_INPUT;
    }
    if (error instanceof CliInputError) return reportInputError('login', error, io);
    io.stderr.write(`toolpin login: failed: ${(error as Error).message}\n`);
    return ExitCodes.BAD_INPUT;
  }
}

/** Registers `toolpin login` on the program: hands the options to {@link runLogin}. */
export function registerLoginCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('login')
    .description("authorize toolpin at an OAuth server's authorization server (pin file auth.mode: client)")
    .argument('<pin-file>', "the server's pin file")
    .option('--no-browser', 'only print the authorization URL (open it yourself)')
    .option('--timeout <ms>', 'how long to wait for the redirect', String(DEFAULT_LOGIN_TIMEOUT_MS))
    .action(async (file: string, options: Omit<LoginCommandOptions, 'file'>) =>
      done(await runLogin({ ...options, file }, io)),
    );
}
