import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One published version: its tarball bytes (served) and, by default, their sha512 as its integrity. */
export interface MirrorVersion {
  readonly version: string;
  readonly tarball: Buffer;
}

/**
 * A local npm registry on 127.0.0.1 for one package: its packument (`GET /<name>`, the shape npm
 * reads: dist-tags, versions with dist.integrity and dist.tarball) and its tarballs. `publish`
 * adds a version and moves `latest` to it, as a real publish does.
 */
export interface NpmRegistryMirror {
  /** `http://127.0.0.1:<port>/` (npm_config_registry). */
  readonly url: string;
  /** The SRI of a published version. */
  integrity(version: string): string;
  publish(version: MirrorVersion): void;
  /** The packument requests served, by path. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** sha512 SRI of bytes, as npm writes dist.integrity. */
export function sriOf(bytes: Buffer): string {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

/** Starts a mirror of `name` with these versions published in order (the last is `latest`). */
export async function startNpmRegistryMirror(
  name: string,
  versions: readonly MirrorVersion[],
): Promise<NpmRegistryMirror> {
  const published = new Map<string, Buffer>();
  let latest = '';
  const requests: string[] = [];
  let url = '';
  const tarballPath = (version: string): string =>
    `/${name}/-/${name.split('/').pop() ?? name}-${version}.tgz`;
  const packument = (): unknown => ({
    name,
    'dist-tags': { latest },
    versions: Object.fromEntries(
      [...published].map(([version, bytes]) => [
        version,
        {
          name,
          version,
          dist: { integrity: sriOf(bytes), tarball: `${url}${tarballPath(version).slice(1)}` },
        },
      ]),
    ),
  });
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(request.url ?? '/');
    requests.push(path);
    const tarball = [...published].find(([version]) => tarballPath(version) === path);
    if (tarball !== undefined) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarball[1]);
      return;
    }
    if (path !== `/${name}`) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    // Never cached: each npm run asks again, as after a registry's max-age.
    response
      .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(JSON.stringify(packument()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const publish = (version: MirrorVersion): void => {
    published.set(version.version, version.tarball);
    latest = version.version;
  };
  for (const version of versions) publish(version);
  return {
    url,
    integrity: (version) => sriOf(published.get(version) ?? Buffer.alloc(0)),
    publish,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
