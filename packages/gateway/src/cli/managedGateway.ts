import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { DEFAULT_PINS_FOLDER } from '../defaults.js';
import { CliInputError } from './cliInputError.js';
import { homeFolder } from './clientConfigFiles.js';

/**
 * The gateway protect manages for a desktop client's HTTP servers (docs/desktop.md#http-servers):
 * its files live in the pin folder (`~/.toolpin`): `gateway.yaml` (loopback ports chosen once and
 * recorded), the HTTP pins it serves in `http/`, and while `toolpin up` runs it, `gateway.pid` and
 * `gateway.log`. protect writes each HTTP entry's route (`http://127.0.0.1:<port>/<name>/mcp`).
 */
export interface ManagedGateway {
  /** The pin folder. */
  readonly dir: string;
  /** `<dir>/gateway.yaml`. */
  readonly file: string;
  /** `<dir>/http`: the pins of the HTTP servers it serves. */
  readonly pins: string;
  readonly pidFile: string;
  readonly logFile: string;
}

/** The files of the managed gateway of a pin folder (`~/.toolpin` by default). */
export function managedGateway(dir?: string): ManagedGateway {
  const folder = resolve(dir ?? join(homeFolder(), DEFAULT_PINS_FOLDER));
  return {
    dir: folder,
    file: join(folder, 'gateway.yaml'),
    pins: join(folder, 'http'),
    pidFile: join(folder, 'gateway.pid'),
    logFile: join(folder, 'gateway.log'),
  };
}

/** The listeners recorded in `gateway.yaml`. */
export interface GatewayPorts {
  readonly host: string;
  readonly port: number;
  readonly adminPort: number;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function listenerOf(value: unknown, where: string, file: string): { host: string; port: number } {
  const record = (value ?? {}) as { host?: unknown; port?: unknown };
  const host = record.host ?? '127.0.0.1';
  if (typeof host !== 'string' || !LOOPBACK.has(host))
    throw new CliInputError(
      `${file}: ${where}.host must be a loopback address (127.0.0.1): the managed gateway is for this machine only`,
    );
  if (typeof record.port !== 'number' || !Number.isInteger(record.port) || record.port <= 0)
    throw new CliInputError(`${file}: ${where}.port: expected the port chosen by toolpin protect`);
  return { host, port: record.port };
}

/** The ports recorded in the managed gateway's file, or undefined when there is no file yet. */
export async function readGatewayPorts(gateway: ManagedGateway): Promise<GatewayPorts | undefined> {
  const text = await readFile(gateway.file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const data = parseDocument(text).toJS() as { listen?: unknown; admin?: unknown } | null;
  const listen = listenerOf(data?.listen, 'listen', gateway.file);
  const admin = listenerOf(data?.admin, 'admin', gateway.file);
  return { host: listen.host, port: listen.port, adminPort: admin.port };
}

/** Listens on `port` (0: one the system chooses) of loopback; the port it got. */
function listening(server: Server, port: number): Promise<number> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => done((server.address() as AddressInfo).port));
  });
}

// The managed gateway's ports are kept for good (client configs name them), so they are taken
// below the ephemeral range (Linux 32768-60999, macOS and Windows 49152-65535): a port the system
// hands out for outgoing connections could be in use by any of them whenever the gateway is down.
const STABLE_PORTS = { low: 20_000, high: 32_767, tries: 64 };

/**
 * Two distinct free loopback ports for good: random ones below the ephemeral range that are free
 * now, or, if none of a few tries is, ones the system chooses.
 */
async function freePorts(): Promise<[number, number]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  try {
    const { low, high, tries } = STABLE_PORTS;
    for (let attempt = 0; attempt < tries && ports.length < 2; attempt++) {
      const server = createServer();
      const candidate = low + Math.floor(Math.random() * (high - low + 1));
      const port = await listening(server, candidate).catch(() => undefined);
      if (port === undefined) continue;
      servers.push(server);
      ports.push(port);
    }
    while (ports.length < 2) {
      const server = createServer();
      servers.push(server);
      ports.push(await listening(server, 0));
    }
    return [ports[0] as number, ports[1] as number];
  } finally {
    await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
  }
}

/**
 * The managed gateway's ports, recorded once: read from `gateway.yaml`, or chosen (two free
 * loopback ports) and written there with its `http/` folder, the first time.
 */
export async function ensureManagedGateway(gateway: ManagedGateway): Promise<GatewayPorts> {
  const recorded = await readGatewayPorts(gateway);
  await mkdir(gateway.pins, { recursive: true, mode: 0o700 });
  if (recorded !== undefined) return recorded;
  const [port, adminPort] = await freePorts();
  const text = [
    '# The gateway toolpin up runs for the HTTP servers toolpin protect routes (docs/desktop.md).',
    '# Its ports were chosen once: the client configs name them in each route.',
    `listen: { host: 127.0.0.1, port: ${port} }`,
    `admin: { host: 127.0.0.1, port: ${adminPort} }`,
    'servers: ./http',
    '',
  ].join('\n');
  await writeFileAtomic(gateway.file, text);
  return { host: '127.0.0.1', port, adminPort };
}

/** The URL a client reaches a routed server at. */
export function routeUrl(ports: GatewayPorts, name: string): string {
  const host = ports.host.includes(':') ? `[${ports.host}]` : ports.host;
  return `http://${host}:${ports.port}/${name}/mcp`;
}

/** The pin file of an entry whose URL is a route of the managed gateway (and whose pin exists), or undefined. */
export function routedPin(
  url: string,
  ports: GatewayPorts | undefined,
  gateway: ManagedGateway,
): string | undefined {
  if (ports === undefined) return undefined;
  const match = /^http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost):(\d+)\/([A-Za-z0-9][A-Za-z0-9_.-]*)\/mcp$/.exec(
    url,
  );
  if (match === null || Number(match[1]) !== ports.port) return undefined;
  const pin = join(gateway.pins, `${match[2] ?? ''}.yaml`);
  return existsSync(pin) ? pin : undefined;
}

/** True when a process with this id exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid `toolpin up` recorded, when that process still runs; undefined otherwise. */
export async function runningGatewayPid(gateway: ManagedGateway): Promise<number | undefined> {
  const text = await readFile(gateway.pidFile, 'utf8').catch(() => undefined);
  const pid = Number(text?.trim());
  return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : undefined;
}
