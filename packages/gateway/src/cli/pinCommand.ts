import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DigestError, TRACE_PROFILE } from '@toolpin/digest';
import type { Command } from 'commander';
import { loadPinFile, parsePinFile, serializePinFile, type PinFileInput } from '../config/index.js';
import { principalNameSchema } from '../config/principalsSchema.js';
import { pinnedCatalogOf, recordPrincipalPin } from '../config/recordPrincipalPin.js';
import {
  pinFromCatalog,
  pinFromSurfaces,
  type CatalogPin,
  type ObservedSurfaces,
} from '../config/pinFromCatalog.js';
import { pinFileMode } from '../config/pinFileMode.js';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { GatewayError } from '../errors.js';

import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import {
  collect,
  parseCapabilities,
  parseCommandOption,
  parseHeaderOptions,
  parseHttpUrl,
  parseServerName,
  parseTimeout,
} from './commonOptions.js';
import { digestTools } from './digestTools.js';
import type { LiveCatalog, LiveHttpTransport, LiveTarget } from '../transports/fetchLiveCatalog.js';
import { readDocument } from './readDocument.js';
import type { ApprovedBy, PinnedArtifact } from '../config/types.js';
import { describeArtifact } from '../policy/artifactDrift.js';
import { recordableServer, statedServerInfo } from '../policy/statedArtifact.js';
import { resolveLaunchArtifact } from '../transports/resolveArtifact.js';
import { reportUncheckedSchemas } from './reportUncheckedSchemas.js';
import type { VerifiedManifest } from '../config/catalogManifest.js';
import { checkAgainstManifest, loadTrustedManifest } from './manifestPin.js';
import { toolsFromDocument } from './toolsFromDocument.js';
import { redactUrl } from '../wire/redactUrl.js';
import { DEFAULT_TIMEOUT_MS, ExitCodes } from '../defaults.js';

/** Options of {@link runPin}, as given on the command line. */
export interface PinCommandOptions {
  /** Server name, also its route `/<name>/mcp`. */
  readonly name: string;
  /** HTTP endpoint to list (exactly one of url, command, fromFile). */
  readonly url?: string;
  /** A stdio server to spawn, as one command line. */
  readonly command?: string;
  /** A catalog already held; needs `upstream`. */
  readonly fromFile?: string;
  /** With `fromFile`: the upstream URL written in the pin file. */
  readonly upstream?: string;
  /** `"Name: value"` headers sent while listing (not written to the pin file). */
  readonly header?: readonly string[];
  /** `enforce` or `monitor`. @default 'enforce' */
  readonly mode?: string;
  /** Client capabilities declared at initialize, as JSON. */
  readonly capabilities?: string;
  /** Profile label of the digests. @default TRACE_PROFILE */
  readonly profile?: string;
  /** Write here (YAML, or JSON for *.json) instead of stdout. */
  readonly out?: string;
  /** Record the catalog as this principal's entry of the pin file `out` (docs/scopes.md#pins-per-principal). */
  readonly as?: string;
  /** Per request timeout in milliseconds. @default 30000 */
  readonly timeout?: string;
  /** `streamable-http`, `sse` or `auto`. @default auto (detect, with url) */
  readonly transport?: string;
  /**
   * Comma-separated surfaces to pin: `tools` (always pinned), `prompts`, `resourceTemplates`,
   * `instructions`. @default every surface the server offers (prompts and resource templates per
   * its capabilities, instructions always)
   */
  readonly surfaces?: string;
  /**
   * A signed catalog manifest (a file or an http(s) URL, docs/manifests.md): the pin is written only
   * when the live catalog's digests are the manifest's, under its profile. Needs `trustKey`.
   */
  readonly manifest?: string;
  /** Public keys (Ed25519 JWK or PEM) one of which must have signed the manifest. */
  readonly trustKey?: readonly string[];
}

const SURFACE_NAMES = ['tools', 'prompts', 'resourceTemplates', 'instructions'] as const;

/** The surfaces asked for beside tools: explicit (`--surfaces`), or every one offered. */
interface SurfaceRequest {
  readonly explicit: boolean;
  readonly prompts: boolean;
  readonly resourceTemplates: boolean;
  readonly instructions: boolean;
}

function surfacesOf(options: PinCommandOptions): SurfaceRequest {
  if (options.surfaces === undefined)
    return {
      explicit: false,
      prompts: options.fromFile === undefined,
      resourceTemplates: options.fromFile === undefined,
      instructions: options.fromFile === undefined,
    };
  const names = options.surfaces
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  for (const name of names)
    if (!(SURFACE_NAMES as readonly string[]).includes(name))
      throw new CliInputError(
        `--surfaces ${options.surfaces}: expected a list of ${SURFACE_NAMES.join(', ')}`,
      );
  const has = (name: string): boolean => names.includes(name);
  if (options.fromFile !== undefined && names.some((name) => name !== 'tools'))
    throw new CliInputError(
      '--surfaces: a catalog file holds tools only; list the server (--url, --command) to pin the rest',
    );
  return {
    explicit: true,
    prompts: has('prompts'),
    resourceTemplates: has('resourceTemplates'),
    instructions: has('instructions'),
  };
}

/**
 * What the pin records beside tools: each surface asked for and offered, listed whole; asked for by
 * name but not offered, pinned empty (nothing served, and nothing may appear unreviewed); offered by
 * default but not by the server, left unpinned. The instructions are pinned (their absence too).
 */
function observedSurfaces(live: LiveCatalog, request: SurfaceRequest, io: CliIo): ObservedSurfaces {
  const observed: { -readonly [K in keyof ObservedSurfaces]: ObservedSurfaces[K] } = {};
  for (const surface of ['prompts', 'resourceTemplates'] as const) {
    if (!request[surface]) continue;
    const listed = live.surfaces[surface];
    if (listed !== undefined) observed[surface] = listed.items;
    else if (request.explicit) {
      io.stderr.write(`the server does not offer ${surface}: pinned empty (no ${surface} may be served)\n`);
      observed[surface] = [];
    } else io.stderr.write(`the server does not offer ${surface}: not pinned\n`);
  }
  if (request.instructions) observed.instructions = { text: live.instructions };
  return observed;
}

interface Source {
  readonly upstream: PinFileInput['upstream'];
  readonly target: LiveTarget | undefined;
  readonly describe: string;
}

const TRANSPORTS = ['streamable-http', 'sse', 'auto'] as const;

// Absent = auto: with --url the transport is detected; with --from-file nothing can be, so auto is refused.
function transportOf(options: PinCommandOptions): LiveHttpTransport | undefined {
  const { transport } = options;
  if (transport === undefined) return undefined;
  if (!(TRANSPORTS as readonly string[]).includes(transport))
    throw new CliInputError(`--transport ${transport}: expected streamable-http, sse or auto`);
  if (options.command !== undefined)
    throw new CliInputError('--transport is for --url or --from-file: a --command server speaks stdio');
  if (options.fromFile !== undefined && transport === 'auto')
    throw new CliInputError('--transport auto needs --url: a catalog file cannot tell the transport');
  return transport as LiveHttpTransport;
}

function sourceOf(options: PinCommandOptions): Source {
  const given = [options.url, options.command, options.fromFile].filter((value) => value !== undefined);
  if (given.length !== 1)
    throw new CliInputError(
      'give exactly one of --url <url>, --command "<cmd …>" or --from-file <catalog.json>',
    );
  const headers = parseHeaderOptions(options.header);
  const transport = transportOf(options);
  if (options.url !== undefined) {
    const url = parseHttpUrl('--url', options.url);
    return {
      upstream: { url },
      target: { url, headers, ...(transport === undefined ? {} : { transport }) },
      describe: redactUrl(url),
    };
  }
  if (options.command !== undefined) {
    const argv = parseCommandOption(options.command);
    return { upstream: { command: argv }, target: { command: argv }, describe: `stdio: ${argv[0] ?? ''}` };
  }
  if (options.upstream === undefined)
    throw new CliInputError('--from-file needs --upstream <url>: the server the catalog was listed from');
  const upstream = parseHttpUrl('--upstream', options.upstream);
  return {
    upstream:
      transport === undefined || transport === 'auto' ? { url: upstream } : { url: upstream, transport },
    target: undefined,
    describe: options.fromFile ?? '',
  };
}

/** Where a live server is listed for its pin, and the upstream its pin file records. */
export interface LiveSource {
  readonly upstream: PinFileInput['upstream'];
  readonly target: LiveTarget;
  /** How the server is named in messages (a redacted URL, `stdio: <program>`). */
  readonly describe: string;
}

/** Every surface the server offers (the default of `pin` and `protect`). */
const EVERY_SURFACE: SurfaceRequest = {
  explicit: false,
  prompts: true,
  resourceTemplates: true,
  instructions: true,
};

/** How {@link listForPin} lists: `--capabilities`, `--timeout`, the folder of a relative stdio `cwd`, `--surfaces`. */
export interface ListForPinOptions {
  readonly capabilities?: Record<string, unknown>;
  readonly timeoutMs: number;
  readonly baseDir?: string;
  /** The surfaces to list beside tools. @default every surface the server offers */
  readonly surfaces?: SurfaceRequest;
}

/**
 * Lists a live server's whole catalog for its pin (`toolpin pin`, `toolpin protect`): the tools,
 * the other surfaces asked for, and the upstream to write, with the transport they were listed
 * over (the gateway never probes at runtime). Reports the listing on stderr.
 */
export async function listForPin(
  source: LiveSource,
  options: ListForPinOptions,
  io: CliIo,
): Promise<ListedForPin> {
  const request = options.surfaces ?? EVERY_SURFACE;
  const { target, artifact } = await artifactOfTarget(source, options, io);
  // The listing clients (both SDKs') load when a server is listed, not for a pin file's manifest.
  const { fetchLiveCatalog } = await import('../transports/fetchLiveCatalog.js');
  const live = await fetchLiveCatalog(target, {
    timeoutMs: options.timeoutMs,
    surfaces: (['prompts', 'resourceTemplates'] as const).filter((surface) => request[surface]),
    ...(options.capabilities === undefined ? {} : { capabilities: options.capabilities }),
    ...(options.baseDir === undefined ? {} : { baseDir: options.baseDir }),
  });
  if (live.detection !== undefined)
    io.stderr.write(
      `detected the legacy HTTP+SSE transport (MCP 2024-11-05) at ${source.describe}: ${live.detection}; the pin records transport: sse\n`,
    );
  io.stderr.write(
    `listed ${live.tools.length} tools in ${live.pages} page(s)${live.protocolVersion === undefined ? '' : ` (MCP ${live.protocolVersion})`}\n`,
  );
  for (const [surface, listed] of Object.entries(live.surfaces))
    io.stderr.write(`listed ${listed.items.length} ${surface} in ${listed.pages} page(s)\n`);
  const upstream =
    'url' in source.upstream && live.transport !== 'stdio'
      ? { ...source.upstream, transport: live.transport }
      : source.upstream;
  const served = artifact ?? statedArtifactOf(source, live, io);
  return {
    tools: live.tools,
    upstream,
    surfaces: observedSurfaces(live, request, io),
    ...(served === undefined ? {} : { artifact: served }),
  };
}

/**
 * An HTTP server's artifact: the name and version it stated while it was listed (initialize's
 * `serverInfo`, server/discover's in 2026-07-28), pinned by value; said on stderr, or why not.
 */
function statedArtifactOf(source: LiveSource, live: LiveCatalog, io: CliIo): PinnedArtifact | undefined {
  if (!('url' in source.target)) return undefined;
  const recorded = recordableServer(statedServerInfo(live.serverInfo));
  if ('problem' in recorded) {
    io.stderr.write(`artifact not recorded: ${recorded.problem}\n`);
    return undefined;
  }
  io.stderr.write(`artifact: ${describeArtifact(recorded.artifact)} (as the server states it)\n`);
  return recorded.artifact;
}

/** What {@link listForPin} read: the catalog, the upstream to write, and the artifact that served it. */
export interface ListedForPin {
  readonly tools: unknown[];
  readonly upstream: PinFileInput['upstream'];
  readonly surfaces: ObservedSurfaces;
  /** What the command runs (docs/pin-lifecycle.md#the-artifact); absent when it cannot be told. */
  readonly artifact?: PinnedArtifact;
}

/**
 * A stdio server's artifact, resolved before it is listed: the listing then runs exactly that
 * artifact (`pkg@1.2.3`, the image id), so what is pinned is what was listed. One that cannot
 * be resolved is said on stderr, and the pin records none.
 */
async function artifactOfTarget(
  source: LiveSource,
  options: ListForPinOptions,
  io: CliIo,
): Promise<{ target: LiveTarget; artifact?: PinnedArtifact }> {
  if ('url' in source.target) return { target: source.target };
  const { resolution, launch } = await resolveLaunchArtifact(source.target, { baseDir: options.baseDir });
  if (!resolution.ok) {
    io.stderr.write(`artifact not recorded: ${resolution.problem}\n`);
    return { target: source.target };
  }
  io.stderr.write(
    `artifact: ${describeArtifact(resolution.artifact)}${resolution.note === undefined ? '' : ` (${resolution.note})`}\n`,
  );
  return { target: launch, artifact: resolution.artifact };
}

/** A catalog to pin and where its pin goes (see {@link writePin}). */
export interface PinWrite {
  readonly name: string;
  readonly upstream: PinFileInput['upstream'];
  /** The client capabilities the catalog was listed with (`pin --capabilities`), recorded in the pin. */
  readonly clientCapabilities?: Record<string, unknown>;
  readonly tools: unknown[];
  /** The surfaces beside tools, as {@link listForPin} observed them. @default none pinned */
  readonly surfaces?: ObservedSurfaces;
  readonly mode: 'enforce' | 'monitor';
  readonly profile: string;
  /** An absolute path (YAML, or JSON for *.json); stdout when absent. Its folder exists. */
  readonly out?: string;
  /** How the server is named in messages. */
  readonly describe: string;
  /** The artifact that served the catalog, recorded as `pin.artifact`. */
  readonly artifact?: PinnedArtifact;
  /** Record the catalog as this principal's entry of the existing pin file `out` (docs/scopes.md). */
  readonly as?: string;
  /** A verified catalog manifest the pin must equal (else GW_MANIFEST_REFUSED, nothing written); recorded as `approvedBy`. */
  readonly manifest?: VerifiedManifest;
}

/**
 * Writes the pin file of a catalog (`toolpin pin`, `toolpin protect`): every tool digested (a pin
 * that leaves one out would block it forever), every member recorded, the other surfaces by their
 * profiles' members, the result parsed back as the gateway will read it, then written atomically.
 * Returns the number of tools pinned.
 */
export async function writePin(request: PinWrite, io: CliIo): Promise<number> {
  const { tools, profile, out } = request;
  digestTools(tools, profile, request.describe);
  // Every member of every definition is recorded: the six by digest, the others by value; the
  // other surfaces by their profiles' members (a prompt or template without a digest is refused too).
  let pinned;
  try {
    pinned = pinFromSurfaces(pinFromCatalog(tools, profile), request.surfaces ?? {});
  } catch (error) {
    if (error instanceof DigestError)
      throw new CliInputError(`${request.describe}: ${error.message}`, { cause: error });
    throw error;
  }
  const { definitions, extraMembers } = pinned;
  const pin = request.artifact === undefined ? pinned.pin : { ...pinned.pin, artifact: request.artifact };
  const approvedBy =
    request.manifest === undefined
      ? undefined
      : checkAgainstManifest(request.manifest, pin, request.artifact);
  reportUncheckedSchemas(definitions, (line) => io.stderr.write(line));
  const format = out !== undefined && out.toLowerCase().endsWith('.json') ? 'json' : 'yaml';
  const text = serializePinFile(
    {
      name: request.name,
      upstream: request.upstream,
      ...(request.clientCapabilities === undefined ? {} : { clientCapabilities: request.clientCapabilities }),
      mode: request.mode,
      profile,
      pin,
      definitions,
      extraMembers,
      ...(pinned.promptDefinitions === undefined ? {} : { promptDefinitions: pinned.promptDefinitions }),
      ...(pinned.templateDefinitions === undefined
        ? {}
        : { templateDefinitions: pinned.templateDefinitions }),
      ...(pinned.instructions === undefined ? {} : { instructions: pinned.instructions }),
      ...(approvedBy === undefined ? {} : { approvedBy }),
    },
    format,
  );
  try {
    parsePinFile(text, out ?? 'stdout');
  } catch (error) {
    if (error instanceof GatewayError) throw new CliInputError(error.message, { cause: error });
    throw error;
  }
  if (request.as !== undefined) await recordAs(request.as, request.name, out, text);
  else if (out === undefined) io.stdout.write(text);
  // A pin holding a secret (an env, a credential in the URL) is readable by its owner only,
  // whatever the folder's mode (an existing ~/.toolpin may be 0755).
  else await writeFileAtomic(out, text, pinFileMode(request.upstream));
  reportPinned(request, { ...pinned, pin }, approvedBy, io);
  return Object.keys(pin.tools).length;
}

/** What `writePin` says it wrote: the tools, the surfaces beside them, and the manifest that approved them. */
function reportPinned(
  request: PinWrite,
  pinned: CatalogPin,
  approvedBy: ApprovedBy | undefined,
  io: CliIo,
): void {
  const { pin } = pinned;
  const others = [
    ...(pin.prompts === undefined ? [] : [`${Object.keys(pin.prompts.items).length} prompts`]),
    ...(pin.resourceTemplates === undefined
      ? []
      : [`${Object.keys(pin.resourceTemplates.items).length} resource templates`]),
    ...(pin.instructions === undefined
      ? []
      : [pinned.instructions === undefined ? 'the absence of instructions' : 'the instructions']),
  ];
  // The tools' line reads as it always has; the other surfaces follow on a line of their own.
  io.stderr.write(
    `pinned ${Object.keys(pin.tools).length} tools of ${request.name}${request.as === undefined ? '' : ` as ${request.as}`} (catalog ${pin.catalog}) to ${request.out ?? 'stdout'}\n`,
  );
  if (others.length > 0) io.stderr.write(`pinned beside the tools: ${others.join(', ')}\n`);
  if (approvedBy !== undefined)
    io.stderr.write(
      `approved by the manifest of ${approvedBy.server ?? '?'} (${approvedBy.manifest}), signed by key ${approvedBy.kid}\n`,
    );
}

/**
 * `--as <principal>`: the catalog (the pin file `text` holds) becomes the principal's entry of the
 * server's existing pin file `out`, whose other members are kept (its upstream, its own catalog,
 * the other principals' entries).
 */
async function recordAs(
  principal: string,
  name: string,
  out: string | undefined,
  text: string,
): Promise<void> {
  if (!principalNameSchema.safeParse(principal).success)
    throw new CliInputError(
      `--as ${principal}: expected a principal's name (letters, digits, "_", ".", "@", "-")`,
    );
  if (out === undefined)
    throw new CliInputError("--as records into a pin file: give --out <the server's pin file>");
  let existing;
  try {
    existing = await loadPinFile(out);
  } catch (error) {
    const why = error instanceof GatewayError ? error.message : String(error);
    throw new CliInputError(
      `--as ${principal}: --out must be the server's pin file, made first by toolpin pin (${why})`,
    );
  }
  if (existing.name !== name)
    throw new CliInputError(`--as ${principal}: ${out} pins ${existing.name}, not ${name}`);
  await recordPrincipalPin(out, principal, pinnedCatalogOf(parsePinFile(text, out)), { replace: true });
}

/** The tools and surfaces to pin and the upstream to write: with --url, the transport they were listed over. */
async function readTools(
  source: Source,
  options: PinCommandOptions,
  request: SurfaceRequest,
  io: CliIo,
): Promise<ListedForPin> {
  if (source.target === undefined)
    return {
      tools: toolsFromDocument(readDocument(options.fromFile ?? ''), options.fromFile ?? ''),
      upstream: source.upstream,
      surfaces: {},
    };
  const capabilities = parseCapabilities(options.capabilities);
  return listForPin(
    { upstream: source.upstream, target: source.target, describe: source.describe },
    {
      timeoutMs: parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS),
      surfaces: request,
      ...(capabilities === undefined ? {} : { capabilities }),
    },
    io,
  );
}

/** The manifest of `--manifest`, verified before the server is listed (a bad one lists nothing). */
async function manifestOf(options: PinCommandOptions, io: CliIo): Promise<VerifiedManifest | undefined> {
  if (options.manifest === undefined) {
    if ((options.trustKey ?? []).length > 0) throw new CliInputError('--trust-key is for --manifest');
    return undefined;
  }
  const timeout = parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS);
  const verified = await loadTrustedManifest(options.manifest, options.trustKey ?? [], timeout);
  io.stderr.write(
    `manifest ${verified.source}: ${verified.body.tools.length} tools of ${verified.body.server.name}, signed by trusted key ${verified.kid}\n`,
  );
  return verified;
}

async function pinServer(options: PinCommandOptions, io: CliIo): Promise<void> {
  const { mode = 'enforce' } = options;
  if (mode !== 'enforce' && mode !== 'monitor')
    throw new CliInputError(`--mode ${mode}: expected enforce or monitor`);
  parseServerName(options.name);
  const source = sourceOf(options);
  const request = surfacesOf(options);
  const manifest = await manifestOf(options, io);
  // The digests compare only under one label: the manifest's.
  const profile = manifest?.body.profile ?? options.profile ?? TRACE_PROFILE;
  const out = options.out === undefined ? undefined : resolve(options.out);
  // The pin's folder exists before the server is listed (`~/.toolpin/` on a fresh machine): a
  // folder that cannot be made fails at once, not after the whole listing.
  if (out !== undefined) {
    try {
      await mkdir(dirname(out), { recursive: true });
    } catch (error) {
      throw new CliInputError(
        `--out ${options.out}: cannot create its folder (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  const { tools, upstream, surfaces, artifact } = await readTools(source, options, request, io);
  const clientCapabilities =
    source.target === undefined ? undefined : parseCapabilities(options.capabilities);
  await writePin(
    {
      name: options.name,
      upstream,
      ...(clientCapabilities === undefined ? {} : { clientCapabilities }),
      tools,
      surfaces,
      mode,
      profile,
      describe: source.describe,
      ...(out === undefined ? {} : { out }),
      ...(artifact === undefined ? {} : { artifact }),
      ...(manifest === undefined ? {} : { manifest }),
      ...(options.as === undefined ? {} : { as: options.as }),
    },
    io,
  );
}

/**
 * `toolpin pin`: lists a live server's whole catalog as an MCP client (or reads a catalog already
 * held) and writes its pin file; exit 0, or 2 when it cannot.
 */
export async function runPin(options: PinCommandOptions, io: CliIo): Promise<number> {
  try {
    await pinServer(options, io);
    return ExitCodes.OK;
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'GW_CATALOG_UNAVAILABLE') {
      io.stderr.write(`toolpin pin: ${error.message}\n`);
      return ExitCodes.BAD_INPUT;
    }
    // A manifest refused (untrusted, edited, or not the live catalog) is a refusal, not bad input.
    if (error instanceof GatewayError && error.code === 'GW_MANIFEST_REFUSED') {
      io.stderr.write(`toolpin pin: refused: ${error.message}\n`);
      return ExitCodes.FAILED;
    }
    return reportInputError('pin', error, io);
  }
}

/** Registers `toolpin pin` on the program: parses the arguments and hands them to {@link runPin}. */
export function registerPinCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('pin')
    .description(
      'connect to a server as an MCP client, list every page of its tools, prompts and resource templates, keep its instructions, and write its pin file (exit 0, or 2 when it cannot)',
    )
    .requiredOption('--name <name>', 'server name, also its route /<name>/mcp')
    .option(
      '--url <url>',
      'HTTP endpoint: Streamable HTTP (2025 initialize, or 2026-07-28 when the server only speaks that), else the legacy HTTP+SSE transport when the server answers 400/404/405 (see --transport)',
    )
    .option(
      '--transport <kind>',
      'streamable-http, sse or auto (default auto: detect, with --url); the transport written to the pin file',
    )
    .option('--command <cmd>', 'a stdio server to spawn, as one command line ("node server.js --flag")')
    .option(
      '--from-file <catalog>',
      'a catalog already held (tools array, tools/list result or JSON-RPC response); needs --upstream',
    )
    .option('--upstream <url>', 'with --from-file: the upstream URL written in the pin file')
    .option(
      '--as <principal>',
      "record the catalog as this principal's own in the server's pin file --out (list with the principal's credentials, --header)",
    )
    .option(
      '--header <header>',
      '"Name: value" sent while listing (repeatable; not written to the pin file)',
      collect,
      [],
    )
    .option('--mode <mode>', 'enforce or monitor', 'enforce')
    .option('--capabilities <json>', 'client capabilities declared at initialize, e.g. {"sampling":{}}')
    .option('--profile <label>', 'profile label of the digests', TRACE_PROFILE)
    .option(
      '--surfaces <list>',
      'surfaces to pin, comma-separated: tools,prompts,resourceTemplates,instructions (default: every one the server offers; tools always)',
    )
    .option('--out <file>', 'write here (YAML, or JSON for *.json) instead of stdout')
    .option('--timeout <ms>', 'per request timeout', String(DEFAULT_TIMEOUT_MS))
    .option(
      '--manifest <file-or-url>',
      "a signed catalog manifest (docs/manifests.md): pin only if the live catalog's digests are the manifest's (else exit 1, nothing written)",
    )
    .option(
      '--trust-key <public-key>',
      'with --manifest: a public key (Ed25519 JWK or PEM) trusted to sign it; repeatable',
      collect,
      [],
    )
    .action(async (options: PinCommandOptions) => done(await runPin(options, io)));
}
