import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isStdioUpstream, parsePinFile, type PinFileInput, type UpstreamConfig } from '../config/index.js';
import { redactUrl } from '../wire/redactUrl.js';
import { isClientVariable, type ClientServer, type HttpEntry, type StdioEntry } from './clientConfig.js';
import { routeUrl, type GatewayPorts, type ManagedGateway } from './managedGateway.js';
import type { LiveSource } from './pinCommand.js';

/** The command a client runs to start toolpin: `[program, ...args]` before `wrap`. */
export interface Launcher {
  readonly command: string;
  readonly args: readonly string[];
  /** This toolpin's script, recognized in entries already wrapped. */
  readonly script: string;
}

/** What protect does with one server. */
export interface Plan {
  readonly server: ClientServer;
  readonly pinName: string;
  readonly pinFile: string;
  /** A pin of this very upstream is already in the folder: kept, the server is not started. */
  readonly reuse: boolean;
  /** A pin of this HTTP server written by an earlier protect in the pin folder itself: moved to `http/`. */
  readonly moveFrom?: string;
  readonly source?: LiveSource;
  /** The entry after protect. */
  readonly after: Record<string, unknown>;
  /** Why the server is left as it was without being started. */
  readonly skip?: string;
}

/** Where protect puts pins: stdio pins in the folder, HTTP pins in the managed gateway's `http/`. */
export interface PlanContext {
  readonly gateway: ManagedGateway;
  /** The managed gateway's ports; undefined in a dry run before they were ever chosen. */
  readonly ports: GatewayPorts | undefined;
  readonly configDir: string;
  readonly launcher: Launcher;
}

/** A server name as a pin's name and file name: letters, digits, `_`, `.`, `-`, starting alphanumeric. */
export function pinNameOf(name: string): string {
  const safe = name
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 56)
    .replace(/[-.]+$/, '');
  return safe === '' ? 'server' : safe;
}

function stdioArgv(upstream: { command: string | readonly string[]; args?: readonly string[] }): string[] {
  const command = typeof upstream.command === 'string' ? [upstream.command] : [...upstream.command];
  return [...command, ...(upstream.args ?? [])];
}

const sortedJson = (names: Iterable<string>): string => JSON.stringify([...new Set(names)].sort());

/**
 * True when the pin file at `file` pins this very upstream: the same program, arguments and
 * folder, and the same variable names (a pin of an earlier protect holds their values: the names
 * count, so a rotated key is the same server); or the same URL.
 */
export function pinsSameUpstream(file: string, upstream: PinFileInput['upstream']): boolean {
  let pinned: UpstreamConfig;
  try {
    pinned = parsePinFile(readFileSync(file, 'utf8'), file).upstream;
  } catch {
    return false;
  }
  if ('url' in upstream) return !isStdioUpstream(pinned) && pinned.url === upstream.url;
  if (!isStdioUpstream(pinned)) return false;
  return (
    JSON.stringify(stdioArgv(pinned)) === JSON.stringify(stdioArgv(upstream)) &&
    sortedJson([...(pinned.passEnv ?? []), ...Object.keys(pinned.env)]) ===
      sortedJson([...(upstream.passEnv ?? []), ...Object.keys(upstream.env ?? {})]) &&
    pinned.cwd === upstream.cwd
  );
}

/**
 * A stdio server's pin records its program, arguments and folder, and the names of its `env`:
 * the values stay in the client's entry (the client passes them to wrap, wrap to the server), so
 * a pin never holds a secret and a key rotated in the client config is the one used. Values the
 * client substitutes (`${input:…}`) are not passed while listing: only the client knows them.
 */
function stdioPlan(launch: StdioEntry, configDir: string) {
  const listingEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(launch.env))
    if (!isClientVariable(value)) listingEnv[name] = value;
  const pinCwd =
    launch.cwd === undefined || isClientVariable(launch.cwd) ? undefined : resolve(configDir, launch.cwd);
  const cwd = pinCwd === undefined ? {} : { cwd: pinCwd };
  const upstream = {
    command: launch.command,
    args: [...launch.args],
    passEnv: Object.keys(launch.env),
    ...cwd,
  };
  const source: LiveSource = {
    upstream,
    target: { command: [launch.command], args: launch.args, env: listingEnv, ...cwd },
    describe: `stdio: ${launch.command}`,
  };
  return { upstream, source, keepCwd: launch.cwd !== undefined && pinCwd === undefined };
}

function httpSource(http: HttpEntry): LiveSource {
  return {
    // Headers are sent while listing, never written to the pin (they stay in the client config).
    upstream: { url: http.url, ...(http.transport === undefined ? {} : { transport: http.transport }) },
    target: { url: http.url, headers: http.headers, transport: http.transport ?? 'auto' },
    describe: redactUrl(http.url),
  };
}

/** The wrapped entry: every key in its place, `command`/`args` through toolpin, `env` as the client had it. */
function wrappedEntry(
  entry: Record<string, unknown>,
  launcher: Launcher,
  pinFile: string,
  keepCwd: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'command') {
      out.command = launcher.command;
      out.args = [...launcher.args, 'wrap', '--pin', pinFile];
    } else if (key === 'args') continue;
    else if (key !== 'cwd' || keepCwd) out[key] = value;
  }
  return out;
}

/** The routed entry: its `url` the managed gateway's route, `headers` kept (passed on to the upstream). */
function routedEntry(entry: Record<string, unknown>, url: string): Record<string, unknown> {
  // The route speaks Streamable HTTP whatever the upstream's transport.
  return { ...entry, url, ...(entry.type === 'sse' ? { type: 'http' } : {}) };
}

/** The route shown before the ports were ever chosen (a dry run): the port is chosen when protect runs. */
const UNCHOSEN: GatewayPorts = { host: '127.0.0.1', port: 0, adminPort: 0 };

/** Picks the pin file: the base name, or the next free one; an existing pin of the same upstream is kept. */
function pickPin(folder: string, base: string, upstream: PinFileInput['upstream'], taken: Set<string>) {
  let pinName = base;
  let pinFile = join(folder, `${pinName}.yaml`);
  let reuse = false;
  for (let n = 2; n < 1000; n += 1) {
    if (!taken.has(pinFile)) {
      if (!existsSync(pinFile)) break;
      if (pinsSameUpstream(pinFile, upstream)) {
        reuse = true;
        break;
      }
    }
    pinName = `${base.slice(0, 56)}-${n}`;
    pinFile = join(folder, `${pinName}.yaml`);
  }
  taken.add(pinFile);
  return { pinName, pinFile, reuse };
}

function planOne(
  server: Exclude<ClientServer, { kind: 'wrapped' }>,
  context: PlanContext,
  taken: Set<string>,
): Plan {
  const base = pinNameOf(server.name);
  if (server.kind === 'stdio') {
    const stdio = stdioPlan(server.launch, context.configDir);
    const picked = pickPin(context.gateway.dir, base, stdio.upstream, taken);
    const after = wrappedEntry(server.entry, context.launcher, picked.pinFile, stdio.keepCwd);
    return { server, ...picked, source: stdio.source, after };
  }
  const source = httpSource(server.http);
  const picked = pickPin(context.gateway.pins, base, source.upstream, taken);
  // A pin of an earlier protect (which left HTTP entries as they were) is moved, never re-listed.
  const earlier = join(context.gateway.dir, `${picked.pinName}.yaml`);
  const moveFrom =
    !picked.reuse && existsSync(earlier) && pinsSameUpstream(earlier, source.upstream) ? earlier : undefined;
  const after = routedEntry(server.entry, routeUrl(context.ports ?? UNCHOSEN, picked.pinName));
  return {
    server,
    ...picked,
    reuse: picked.reuse || moveFrom !== undefined,
    ...(moveFrom === undefined ? {} : { moveFrom }),
    source,
    after,
  };
}

/** What protect does with each server of the config that is not already protected. */
export function planServers(servers: readonly ClientServer[], context: PlanContext): Plan[] {
  const taken = new Set(
    servers.flatMap((server) => (server.kind === 'wrapped' ? [resolve(server.pin)] : [])),
  );
  const plans: Plan[] = [];
  for (const server of servers) {
    if (server.kind === 'wrapped') continue;
    // A client variable in the command line is resolved by the client at launch, and a pin records
    // what runs: it cannot be pinned for the client (a value in `env` can: it stays in the entry).
    if (server.kind === 'stdio' && [server.launch.command, ...server.launch.args].some(isClientVariable)) {
      const pinName = pinNameOf(server.name);
      const skip =
        'its command or args use a variable the client substitutes (${…}); pin and wrap it by hand';
      plans.push({
        server,
        pinName,
        pinFile: join(context.gateway.dir, `${pinName}.yaml`),
        reuse: false,
        after: server.entry,
        skip,
      });
      continue;
    }
    plans.push(planOne(server, context, taken));
  }
  return plans;
}
