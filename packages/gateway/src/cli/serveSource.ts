import { mkdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  describeUpstream,
  loadPinFile,
  parsePinFile,
  serializePinFile,
  upstreamIdentity,
  type PinFileInput,
  type ServerConfig,
} from '../config/index.js';
import { pinFileMode } from '../config/pinFileMode.js';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { DEFAULT_PINS_FOLDER } from '../defaults.js';
import { GatewayError } from '../errors.js';

import { CliInputError } from './cliInputError.js';
import { parseCommandOption, parseHttpUrl, parseServerName } from './commonOptions.js';

/** The flags of `toolpin serve` that say what it serves. */
export interface ServeSourceOptions {
  /** The gateway file. @default 'config/gateway.yaml' */
  readonly config?: string;
  /** One pin file, served alone (the pin names its upstream). */
  readonly pin?: string;
  /** With `url` or `command` and `trustOnFirstUse`: the server's name, also its route. */
  readonly name?: string;
  /** An HTTP upstream (Streamable HTTP) to serve as `name`. */
  readonly url?: string;
  /** A stdio upstream to serve as `name`, as one command line. */
  readonly command?: string;
  /** Arguments after `command`, one each (spaces kept). */
  readonly args?: readonly string[];
  /** Pin the first complete catalog observed (`pin: trust-on-first-use`). */
  readonly trustOnFirstUse?: boolean;
  /** Where that pin file is written. @default ~/.toolpin/<name>.yaml */
  readonly out?: string;
}

/** What `toolpin serve` serves: a gateway file, or one pin file alone. */
export type ServeSource = { readonly config: string } | { readonly pin: string };

const DEFAULT_GATEWAY_FILE = 'config/gateway.yaml';

// The flags of the one-server form, in the order they are named in errors.
const ONE_SERVER_FLAGS = [
  ['--name', 'name'],
  ['--url', 'url'],
  ['--command', 'command'],
  ['--args', 'args'],
  ['--trust-on-first-use', 'trustOnFirstUse'],
  ['--out', 'out'],
] as const;

function givenFlags(options: ServeSourceOptions): string[] {
  return ONE_SERVER_FLAGS.filter(([, key]) => {
    const value = options[key];
    return value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0);
  }).map(([flag]) => flag);
}

/**
 * Checks the source flags of `toolpin serve` without touching anything: `--config`, or `--pin`
 * alone, or `--name` with one of `--url` / `--command` and `--trust-on-first-use`. Throws
 * CliInputError naming the flag to fix.
 */
export function checkServeSource(options: ServeSourceOptions): void {
  const oneServer = givenFlags(options);
  if (options.pin !== undefined) {
    const extra = [...(options.config === undefined ? [] : ['--config']), ...oneServer];
    if (extra.length > 0)
      throw new CliInputError(
        `--pin serves one pin file alone (it names its upstream): leave out ${extra.join(', ')}`,
      );
    return;
  }
  if (oneServer.length === 0) return;
  if (options.config !== undefined)
    throw new CliInputError(`--config serves a gateway file: leave out ${oneServer.join(', ')}`);
  const { name } = options;
  if (name === undefined)
    throw new CliInputError(`${oneServer[0] ?? ''} needs --name <name>: the server's name, also its route`);
  parseServerName(name);
  if ((options.url === undefined) === (options.command === undefined))
    throw new CliInputError('--name needs exactly one of --url <url> or --command "<cmd …>"');
  if (options.args !== undefined && options.args.length > 0 && options.command === undefined)
    throw new CliInputError('--args goes with --command: an --url server takes no arguments');
  if (options.trustOnFirstUse !== true)
    throw new CliInputError(
      `--name ${name} needs --trust-on-first-use (the first catalog observed becomes the pin), or pin it first: toolpin pin --name ${name} … --out <file>, then toolpin serve --pin <file>`,
    );
  upstreamOf(options);
}

function upstreamOf(options: ServeSourceOptions): PinFileInput['upstream'] {
  if (options.url !== undefined) return { url: parseHttpUrl('--url', options.url) };
  const argv = parseCommandOption(options.command);
  return { command: argv, args: [...(options.args ?? [])] };
}

/** Where the trust-on-first-use pin of `name` is written when `--out` is not given: `~/.toolpin/<name>.yaml`. */
export function defaultFirstUsePinFile(name: string): string {
  return join(homedir(), DEFAULT_PINS_FOLDER, `${name}.yaml`);
}

/**
 * Resolves what `toolpin serve` serves (after {@link checkServeSource}). The one-server form writes
 * a `pin: trust-on-first-use` pin file (creating its folder), which the gateway overwrites with
 * the first complete catalog it observes; run again, it serves that file as it is (the pin
 * observed the first time) when it names the same server and upstream, and refuses otherwise.
 * `note` receives one line saying which file is served.
 */
export async function resolveServeSource(
  options: ServeSourceOptions,
  note: (line: string) => void,
): Promise<ServeSource> {
  if (options.pin !== undefined) return { pin: options.pin };
  if (options.name === undefined && options.config === undefined) {
    // Bare `toolpin serve` outside a checkout: say how to start rather than fail on a missing file.
    if ((await stat(DEFAULT_GATEWAY_FILE).catch(() => undefined)) === undefined)
      throw new CliInputError(
        `no gateway file given and none at ${DEFAULT_GATEWAY_FILE}: start with --config <gateway file> (servers from a folder of pins), --pin <pin file> (one server), or --name <name> --url <url> | --command "<cmd>" --trust-on-first-use (one server, pinned on first use)`,
      );
    return { config: DEFAULT_GATEWAY_FILE };
  }
  if (options.name === undefined) return { config: options.config ?? DEFAULT_GATEWAY_FILE };
  const name = options.name;
  const out = resolve(options.out ?? defaultFirstUsePinFile(name));
  const format = out.toLowerCase().endsWith('.json') ? 'json' : 'yaml';
  const upstream = upstreamOf(options);
  const text = serializePinFile(
    { name, upstream, pin: { catalog: '', tools: {} }, trustOnFirstUse: true },
    format,
  );
  const wanted = parsePinFile(text, out);
  const existing = await stat(out).catch(() => undefined);
  if (existing !== undefined) {
    const held = await loadExisting(out);
    if (held.name !== name || upstreamIdentity(held.upstream) !== upstreamIdentity(wanted.upstream))
      throw new CliInputError(
        `--out ${out}: already the pin file of ${held.name} (${describeUpstream(held.upstream)}): serve it with --pin, or give another --out`,
      );
    note(
      held.trustOnFirstUse === true
        ? `${out}: nothing pinned yet; the first catalog observed becomes the pin`
        : `${out}: serving the pin observed on first use (toolpin check / approve review it)`,
    );
    return { pin: out };
  }
  try {
    await mkdir(dirname(out), { recursive: true });
    await writeFileAtomic(out, text, pinFileMode(upstream));
  } catch (error) {
    throw new CliInputError(
      `--out ${out}: cannot write the pin file (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  note(`${out}: written (pin: trust-on-first-use); the first catalog observed becomes the pin`);
  return { pin: out };
}

async function loadExisting(file: string): Promise<ServerConfig> {
  try {
    return await loadPinFile(file);
  } catch (error) {
    if (error instanceof GatewayError)
      throw new CliInputError(`--out ${file}: exists and is not a pin file: ${error.message}`);
    throw error;
  }
}
