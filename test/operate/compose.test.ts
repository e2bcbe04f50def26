import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadGatewayConfig, loadPinFile } from '@toolpin/gateway';

// There is no Docker engine on our machines: this test keeps docker-compose.yml and the Dockerfile
// honest by checking that everything they name exists in the repository.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

interface Service {
  build?: { context: string; dockerfile?: string; target?: string };
  image?: string;
  command?: string[];
  volumes?: string[];
  ports?: string[];
  depends_on?: string[] | Record<string, unknown>;
}

const compose = parse(read('docker-compose.yml')) as { services: Record<string, Service> };
const services = Object.entries(compose.services);
const dockerfile = read('Dockerfile');
const stages = [...dockerfile.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1]);
const WORKDIR = /^WORKDIR\s+(\S+)/m.exec(dockerfile)?.[1] ?? '/';

/** A volume `host:container[:mode]` split into its parts. */
function splitVolume(volume: string): { host: string; container: string; mode: string | undefined } {
  const [host = '', container = '', mode] = volume.split(':');
  return { host, container, mode };
}

/** Where a path seen inside a service's container comes from in the repository (a mount, or the image's copy of the repo). */
function repoPathOf(service: Service, path: string): string {
  const absolute = posix.isAbsolute(path) ? path : posix.join(WORKDIR, path);
  for (const volume of (service.volumes ?? []).map(splitVolume)) {
    if (absolute === volume.container || absolute.startsWith(`${volume.container}/`))
      return join(root, volume.host, posix.relative(volume.container, absolute));
  }
  return join(root, posix.relative(WORKDIR, absolute));
}

describe('docker-compose.yml and the Dockerfile', () => {
  it('runs the demo server, two gateway replicas and a load balancer', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['demo-server', 'gateway-1', 'gateway-2', 'lb']);
    expect(compose.services.lb?.image).toMatch(/^nginx:/);
  });

  it.each(services.filter(([, s]) => s.build !== undefined))(
    '%s builds from an existing context, Dockerfile and stage',
    (_name, service) => {
      const build = service.build ?? { context: '.' };
      expect(statSync(join(root, build.context)).isDirectory()).toBe(true);
      expect(existsSync(join(root, build.context, build.dockerfile ?? 'Dockerfile'))).toBe(true);
      expect(stages).toContain(build.target);
    },
  );

  it.each(services)('%s mounts only existing host paths, read-only', (_name, service) => {
    for (const volume of (service.volumes ?? []).map(splitVolume)) {
      expect(existsSync(join(root, volume.host))).toBe(true);
      expect(volume.mode).toBe('ro');
    }
  });

  it.each(services.filter(([, s]) => s.command !== undefined))(
    '%s names only files that exist (scripts, config)',
    (_name, service) => {
      const paths = (service.command ?? []).filter((arg) => /\.(m?js|ya?ml|json)$/.test(arg));
      expect(paths.length).toBeGreaterThan(0);
      for (const path of paths) expect(existsSync(repoPathOf(service, path))).toBe(true);
    },
  );

  it('gives both replicas the same config, and every gateway file it mounts loads (pins included)', async () => {
    const [one, two] = [compose.services['gateway-1'], compose.services['gateway-2']];
    expect(one?.command).toEqual(two?.command);
    expect(one?.volumes).toEqual(two?.volumes);
    const file = repoPathOf(one ?? {}, (one?.command ?? []).at(-1) ?? '');
    const config = await loadGatewayConfig(file);
    expect(config.listen.host).toBe('0.0.0.0');
    // No sticky sessions in front: every replica revalidates before deciding a call.
    expect(config.sessions.revalidateMs).toBe(0);
    const demo = config.servers.find((s) => s.name === 'demo');
    expect(demo?.upstream).toMatchObject({ url: 'http://demo-server:3001/mcp' });
    // The compose pin is the demo pin: only the upstream URL differs.
    const pinned = await loadPinFile(join(root, 'config', 'servers', 'demo.yaml'));
    expect(demo?.pin).toEqual(pinned.pin);
    expect(demo?.definitions).toEqual(pinned.definitions);
  });

  it('points each pin at a compose service on the port that service listens on', async () => {
    const config = await loadGatewayConfig(join(root, 'config', 'compose', 'gateway.yaml'));
    for (const server of config.servers) {
      const url = new URL((server.upstream as { url: string }).url);
      const service = compose.services[url.hostname];
      expect(service?.command).toEqual(expect.arrayContaining(['--port', url.port, '--host', '0.0.0.0']));
    }
  });

  it('balances over services that exist, on the port the gateway listens on', async () => {
    const nginx = read('config/compose/nginx.conf');
    const targets = [...nginx.matchAll(/^\s*server\s+([\w.-]+):(\d+);/gm)].map((m) => [m[1], m[2]]);
    expect(targets).toEqual([
      ['gateway-1', '8080'],
      ['gateway-2', '8080'],
    ]);
    const config = await loadGatewayConfig(join(root, 'config', 'compose', 'gateway.yaml'));
    expect(config.listen.port).toBe(8080);
    expect(nginx).toMatch(/proxy_buffering off;/);
  });

  it('copies the manifest of every workspace package before installing (a frozen install needs them all)', () => {
    const packages = readdirSync(join(root, 'packages')).filter((name) =>
      existsSync(join(root, 'packages', name, 'package.json')),
    );
    expect(packages.length).toBeGreaterThan(0);
    for (const name of packages) {
      expect(
        dockerfile.match(new RegExp(`^COPY packages/${name}/package\\.json packages/${name}/$`, 'gm')),
      ).toHaveLength(2);
    }
  });

  it('builds on Node 20 with a frozen lockfile, copies only existing paths, and runs as non-root', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    expect(dockerfile).toMatch(/pnpm@12\.4\.2 install --frozen-lockfile/);
    expect(dockerfile).toMatch(/install --frozen-lockfile --prod/);
    for (const match of dockerfile.matchAll(/^COPY\s+(?!--from)(.+)$/gm)) {
      const parts = (match[1] ?? '').trim().split(/\s+/);
      for (const source of parts.slice(0, -1)) expect(existsSync(join(root, source))).toBe(true);
    }
    // Every stage that runs something ends as the unprivileged `node` user.
    const sections = dockerfile.split(/^FROM /m).slice(1);
    for (const section of sections.filter((s) => /^(CMD|ENTRYPOINT)/m.test(s)))
      expect(section).toMatch(/^USER node$/m);
    const entry = /^ENTRYPOINT \[(.+)\]$/m.exec(dockerfile)?.[1] ?? '';
    const script = (JSON.parse(`[${entry}]`) as string[])[1] ?? '';
    // The entry point is compiled output: its source must exist.
    expect(existsSync(join(root, script.replace('/dist/', '/src/').replace(/\.js$/, '.ts')))).toBe(true);
  });
});
