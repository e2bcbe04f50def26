import { resolve } from 'node:path';
import { DigestError, TRACE_PROFILE } from '@toolpin/digest';
import type { Command } from 'commander';
import { manifestDigest, type ManifestBody } from '../config/catalogManifest.js';
import { manifestFromCatalog, type ManifestServer, type NamedCatalog } from '../config/manifestDigests.js';
import { pinFromCatalog, pinFromSurfaces } from '../config/pinFromCatalog.js';
import type { PinnedArtifact } from '../config/types.js';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { DEFAULT_TIMEOUT_MS, ExitCodes } from '../defaults.js';
import { GatewayError } from '../errors.js';

import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { parseCommandOption, parseHttpUrl, parseTimeout } from './commonOptions.js';
import { listForPin, type LiveSource } from './pinCommand.js';
import { loadSigningKey, signManifest } from './pinSigner.js';
import { readPinFileForCli } from './readPinFileForCli.js';
import { redactUrl } from '../wire/redactUrl.js';

/** Options of {@link runManifest}, as given on the command line. */
export interface ManifestCommandOptions {
  /** The author's private key (Ed25519 JWK, `toolpin key --new`). */
  readonly sign?: string;
  /** A pin file whose catalog the manifest states (exactly one of pin, url, command). */
  readonly pin?: string;
  /** An HTTP server to list. */
  readonly url?: string;
  /** A stdio server to spawn and list, as one command line. */
  readonly command?: string;
  /** The server's name in the manifest. @default the npm package or the stated name of its artifact, else the pin's name */
  readonly serverName?: string;
  /** The server's version. @default the npm package's version or the stated version of its artifact */
  readonly serverVersion?: string;
  /** Days until the manifest expires. @default never */
  readonly expiresInDays?: string;
  /** Profile label of the digests of a listed server. @default TRACE_PROFILE */
  readonly profile?: string;
  /** Write here instead of stdout. */
  readonly out?: string;
  /** Per request timeout in milliseconds. @default 30000 */
  readonly timeout?: string;
}

/** The catalog to state: a pin file's, or a live server's listed now (its artifact resolved as `pin` does). */
async function catalogOf(
  options: ManifestCommandOptions,
  io: CliIo,
): Promise<{ catalog: NamedCatalog; name: string; artifact?: PinnedArtifact }> {
  const given = [options.pin, options.url, options.command].filter((value) => value !== undefined);
  if (given.length !== 1)
    throw new CliInputError('give exactly one of <pin-file>, --url <url> or --command "<cmd …>"');
  if (options.pin !== undefined) {
    const { server } = await readPinFileForCli(options.pin);
    if (server.trustOnFirstUse === true)
      throw new CliInputError(`${options.pin}: the pin file says trust-on-first-use: nothing is pinned yet`);
    return {
      catalog: server,
      name: server.name,
      ...(server.pin.artifact === undefined ? {} : { artifact: server.pin.artifact }),
    };
  }
  const source = liveSource(options);
  const profile = options.profile ?? TRACE_PROFILE;
  const listed = await listForPin(
    source,
    { timeoutMs: parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS) },
    io,
  );
  let pinned;
  try {
    pinned = pinFromSurfaces(pinFromCatalog(listed.tools, profile), listed.surfaces);
  } catch (error) {
    if (error instanceof DigestError) throw new CliInputError(`${source.describe}: ${error.message}`);
    throw error;
  }
  const pin = listed.artifact === undefined ? pinned.pin : { ...pinned.pin, artifact: listed.artifact };
  const catalog: NamedCatalog = { ...pinned, pin, profile };
  return { catalog, name: '', ...(listed.artifact === undefined ? {} : { artifact: listed.artifact }) };
}

function liveSource(options: ManifestCommandOptions): LiveSource {
  if (options.url !== undefined) {
    const url = parseHttpUrl('--url', options.url);
    return { upstream: { url }, target: { url, headers: {} }, describe: redactUrl(url) };
  }
  const argv = parseCommandOption(options.command);
  return { upstream: { command: argv }, target: { command: argv }, describe: `stdio: ${argv[0] ?? ''}` };
}

/** The server as the manifest names it: as given, else as its artifact states it, else the pin's name. */
function serverOf(
  options: ManifestCommandOptions,
  name: string,
  artifact: PinnedArtifact | undefined,
): ManifestServer {
  const stated =
    artifact?.kind === 'npm'
      ? { name: artifact.package, version: artifact.version }
      : artifact?.kind === 'server'
        ? { name: artifact.name, version: artifact.version }
        : { name };
  const serverName = options.serverName ?? stated.name;
  if (serverName === '') throw new CliInputError('give --server-name: nothing the server runs states a name');
  const version = options.serverVersion ?? ('version' in stated ? stated.version : undefined);
  return {
    name: serverName,
    ...(version === undefined || version === '' ? {} : { version }),
    ...(artifact === undefined ? {} : { artifact }),
  };
}

function expiryOf(options: ManifestCommandOptions, now: Date): Date | undefined {
  if (options.expiresInDays === undefined) return undefined;
  const days = Number(options.expiresInDays);
  if (!Number.isInteger(days) || days <= 0)
    throw new CliInputError(`--expires-in-days ${options.expiresInDays}: expected a whole number of days`);
  return new Date(now.getTime() + days * 86_400_000);
}

async function makeManifest(options: ManifestCommandOptions, io: CliIo): Promise<void> {
  if (options.sign === undefined) throw new CliInputError('give --sign <private.jwk>: a manifest is signed');
  const signer = await loadSigningKey(options.sign);
  const { catalog, name, artifact } = await catalogOf(options, io);
  const issuedAt = new Date();
  const expiresAt = expiryOf(options, issuedAt);
  let body: ManifestBody;
  try {
    body = manifestFromCatalog(catalog, serverOf(options, name, artifact), {
      issuedAt,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    });
  } catch (error) {
    throw new CliInputError((error as Error).message);
  }
  const signature = await signManifest(body, signer);
  const text = `${JSON.stringify({ manifest: body, signature }, null, 2)}\n`;
  if (options.out === undefined) io.stdout.write(text);
  else await writeFileAtomic(resolve(options.out), text, 0o644);
  io.stderr.write(
    `signed the manifest of ${body.tools.length} tools of ${body.server.name} (catalog ${body.catalog}; manifest ${manifestDigest(body)}) by key ${signer.kid}${options.out === undefined ? '' : ` to ${resolve(options.out)}`}\n`,
  );
}

/**
 * `toolpin manifest --sign <private.jwk> <pin-file>` (or `--url`, `--command`): writes a signed
 * catalog manifest (docs/manifests.md) for a server's author or a registry to publish. Exit 0, or 2.
 */
export async function runManifest(options: ManifestCommandOptions, io: CliIo): Promise<number> {
  try {
    await makeManifest(options, io);
    return ExitCodes.OK;
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'GW_CATALOG_UNAVAILABLE') {
      io.stderr.write(`toolpin manifest: ${error.message}\n`);
      return ExitCodes.BAD_INPUT;
    }
    return reportInputError('manifest', error, io);
  }
}

/** Registers `toolpin manifest` on the program. */
export function registerManifestCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('manifest')
    .description(
      "write a signed catalog manifest (docs/manifests.md) of a pin file's catalog, or of a live server's, for its author or a registry to publish",
    )
    .argument('[pin-file]', 'a pin file whose catalog the manifest states')
    .requiredOption('--sign <private-key>', "the author's private key (Ed25519 JWK, toolpin key --new)")
    .option('--url <url>', 'list this HTTP server instead of reading a pin file')
    .option('--command <cmd>', 'spawn and list this stdio server instead of reading a pin file')
    .option('--server-name <name>', "the server's name (default: its npm package, else the pin's name)")
    .option('--server-version <version>', "the server's version (default: its npm package's)")
    .option('--expires-in-days <days>', 'the manifest expires after this many days (default: never)')
    .option('--profile <label>', 'profile label of the digests of a listed server', TRACE_PROFILE)
    .option('--out <file>', 'write here instead of stdout')
    .option('--timeout <ms>', 'per request timeout', String(DEFAULT_TIMEOUT_MS))
    .action(async (pin: string | undefined, options: Omit<ManifestCommandOptions, 'pin'>) =>
      done(await runManifest({ ...options, ...(pin === undefined ? {} : { pin }) }, io)),
    );
}
