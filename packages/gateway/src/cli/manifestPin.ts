import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  parseCatalogManifest,
  statedDigests,
  verifyCatalogManifest,
  type VerifiedManifest,
} from '../config/catalogManifest.js';
import { describeDifference, diffAgainstManifest } from '../config/manifestDigests.js';
import type { ApprovedBy, PinConfig, PinnedArtifact } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { describeArtifact } from '../policy/artifactDrift.js';
import { isHttpUrl } from '../config/schemaParts.js';
import { readBounded } from '../wire/readBounded.js';
import { redactUrl } from '../wire/redactUrl.js';
import { CliInputError } from './cliInputError.js';
import { readKeyFiles } from './readKeyFiles.js';

// A manifest lists digests, not definitions: a few hundred bytes a tool. Beyond this it is refused.
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** Reads a manifest's text from a file or an http(s) URL (bounded; a URL is named redacted). */
async function readManifestText(spec: string, timeoutMs: number): Promise<{ text: string; source: string }> {
  if (isHttpUrl(spec)) {
    const source = redactUrl(spec);
    let response: Response;
    try {
      response = await fetch(spec, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    } catch (error) {
      throw new CliInputError(`--manifest ${source}: cannot fetch it (${(error as Error).message})`);
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      throw new CliInputError(`--manifest ${source}: answered HTTP ${response.status}`);
    }
    const chunks: Uint8Array[] = [];
    const end = await readBounded(response.body, MAX_MANIFEST_BYTES, (chunk) => {
      chunks.push(chunk);
    });
    if (end === 'too_large')
      throw new CliInputError(`--manifest ${source}: larger than ${MAX_MANIFEST_BYTES} bytes`);
    return { text: Buffer.concat(chunks).toString('utf8'), source };
  }
  const file = resolve(spec);
  try {
    const text = await readFile(file, 'utf8');
    if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES)
      throw new CliInputError(`--manifest ${spec}: larger than ${MAX_MANIFEST_BYTES} bytes`);
    return { text, source: file };
  } catch (error) {
    if (error instanceof CliInputError) throw error;
    throw new CliInputError(
      `--manifest ${spec}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/**
 * The manifest of `pin --manifest <file|url> --trust-key <key>…`, its signature verified before the
 * server is listed. Rejects with CliInputError (unreadable, no key) or GatewayError
 * GW_MANIFEST_REFUSED (not a manifest, untrusted key, signature broken, expired).
 */
export async function loadTrustedManifest(
  spec: string,
  keyFiles: readonly string[],
  timeoutMs: number,
): Promise<VerifiedManifest> {
  const keys = await readKeyFiles(keyFiles, '--trust-key');
  const { text, source } = await readManifestText(spec, timeoutMs);
  return verifyCatalogManifest(parseCatalogManifest(text, source), keys, source);
}

// What identifies an artifact across machines: a file's path is the author's, its bytes are not.
const IDENTITY: { readonly [K in PinnedArtifact['kind']]: readonly string[] } = {
  npm: ['package', 'version', 'integrity'],
  file: ['sha256'],
  docker: ['id'],
  server: ['name', 'version'],
};

function sameArtifact(stated: PinnedArtifact, observed: PinnedArtifact): boolean {
  return (
    stated.kind === observed.kind &&
    IDENTITY[stated.kind].every(
      (member) =>
        (stated as unknown as Record<string, unknown>)[member] ===
        (observed as unknown as Record<string, unknown>)[member],
    )
  );
}

/**
 * Compares the live catalog's pin and artifact with a verified manifest: each tool (and each other
 * surface the manifest states) by digest, and the artifact it names. Throws GatewayError
 * GW_MANIFEST_REFUSED (`catalog_differs`) listing every difference; returns the pin's `approvedBy`.
 */
export function checkAgainstManifest(
  verified: VerifiedManifest,
  pin: PinConfig,
  artifact: PinnedArtifact | undefined,
): ApprovedBy {
  const { body } = verified;
  const lines = diffAgainstManifest(statedDigests(body), pin).map(describeDifference);
  const stated = body.server.artifact;
  if (stated !== undefined && artifact === undefined)
    lines.push(
      `  ~ artifact: the manifest states ${describeArtifact(stated)}; the server's could not be resolved`,
    );
  else if (stated !== undefined && artifact !== undefined && !sameArtifact(stated, artifact))
    lines.push(
      `  ~ artifact: the manifest states ${describeArtifact(stated)}, the server runs ${describeArtifact(artifact)}`,
    );
  const server =
    body.server.version === undefined ? body.server.name : `${body.server.name}@${body.server.version}`;
  if (lines.length > 0)
    throw new GatewayError(
      'GW_MANIFEST_REFUSED',
      `Catalog manifest ${verified.source}: the live catalog is not the one ${server} publishes (${lines.length} difference(s)); nothing pinned:\n${lines.join('\n')}`,
      { source: verified.source, reason: 'catalog_differs', kid: verified.kid, differences: lines },
    );
  return { via: 'manifest', kid: verified.kid, manifest: verified.digest, source: verified.source, server };
}
