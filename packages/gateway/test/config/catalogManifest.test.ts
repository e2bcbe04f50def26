import { generateKeyPairSync } from 'node:crypto';
import { canonicalizeJson, digestCatalog, TRACE_PROFILE } from '@toolpin/digest';
import { CompactSign, importJWK } from 'jose';
import {
  MANIFEST_FORMAT,
  MANIFEST_SIGNATURE_TYPE,
  manifestDigest,
  parseCatalogManifest,
  statedDigests,
  verifyCatalogManifest,
  type ManifestBody,
} from '../../src/config/catalogManifest.js';
import { diffAgainstManifest, manifestFromCatalog } from '../../src/config/manifestDigests.js';
import { pinFromCatalog, pinFromSurfaces } from '../../src/config/pinFromCatalog.js';
import { readTrustedKey, type TrustedKey } from '../../src/config/pinSignature.js';
import { GatewayError } from '../../src/errors.js';

const TOOLS = [
  { name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } },
  { name: 'add', description: 'Adds.', inputSchema: { type: 'object' } },
];
const PROMPTS = [{ name: 'greet', description: 'Greets.' }];

/** An Ed25519 pair: the public key as toolpin reads it (from PEM), the private one as jose signs with it. */
function keyPair(): { trusted: TrustedKey; sign: (body: ManifestBody, header?: object) => Promise<string> } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const trusted = readTrustedKey(publicKey.export({ format: 'pem', type: 'spki' }).toString(), 'author.pem');
  const jwk = privateKey.export({ format: 'jwk' });
  const sign = async (body: ManifestBody, header: object = {}): Promise<string> =>
    new CompactSign(new TextEncoder().encode(canonicalizeJson(body)))
      .setProtectedHeader({ alg: 'EdDSA', kid: trusted.kid, typ: MANIFEST_SIGNATURE_TYPE, ...header })
      .sign(await importJWK({ ...jwk, alg: 'EdDSA' }, 'EdDSA'));
  return { trusted, sign };
}

function bodyOf(tools = TOOLS, expiresAt?: Date): ManifestBody {
  const catalog = pinFromSurfaces(pinFromCatalog(tools, TRACE_PROFILE), { prompts: PROMPTS });
  return manifestFromCatalog(
    { ...catalog, profile: TRACE_PROFILE },
    { name: 'demo', version: '2.0.0' },
    { issuedAt: new Date('2026-12-01T00:00:00Z'), ...(expiresAt === undefined ? {} : { expiresAt }) },
  );
}

const detach = (jws: string): string => jws.replace(/\.[^.]*\./, '..');
const documentOf = (manifest: ManifestBody, signature: string) =>
  parseCatalogManifest(JSON.stringify({ manifest, signature }), 'm.json');

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('catalog manifests', () => {
  it('states every tool by name with the digest toolpin pins, and the catalog digest of the same fold', () => {
    const body = bodyOf();
    const published = digestCatalog(TOOLS, { profile: TRACE_PROFILE });
    expect(body).toMatchObject({
      format: MANIFEST_FORMAT,
      profile: TRACE_PROFILE,
      catalog: published.catalog,
    });
    expect(body.tools).toEqual([
      { name: 'add', digest: published.keyed['tool:add'] },
      { name: 'echo', digest: published.keyed['tool:echo'] },
    ]);
    expect(body.prompts?.entries.map((entry) => entry.name)).toEqual(['greet']);
  });

  it('verifies a detached signature by a PEM key, and an embedded one whose payload is the manifest', async () => {
    const { trusted, sign } = keyPair();
    const body = bodyOf();
    const jws = await sign(body);
    const detached = verifyCatalogManifest(documentOf(body, detach(jws)), [trusted], 'm.json');
    expect(detached).toEqual({ body, kid: trusted.kid, digest: manifestDigest(body), source: 'm.json' });
    expect(verifyCatalogManifest(documentOf(body, jws), [trusted], 'm.json').kid).toBe(trusted.kid);
    // An embedded payload that is not this manifest is refused, even when signed.
    const other = bodyOf(TOOLS.slice(0, 1));
    expect(
      refusal(() =>
        verifyCatalogManifest(
          documentOf(
            body,
            jws.replace(/\.[^.]*\./, `.${Buffer.from(canonicalizeJson(other)).toString('base64url')}.`),
          ),
          [trusted],
          'm.json',
        ),
      ),
    ).toMatchObject({ data: { reason: 'malformed' } });
  });

  it('refuses an untrusted key, an edited statement, another signature type and an expired manifest', async () => {
    const author = keyPair();
    const stranger = keyPair();
    const body = bodyOf(TOOLS, new Date('2026-12-31T00:00:00Z'));
    const signature = detach(await author.sign(body));
    expect(
      refusal(() => verifyCatalogManifest(documentOf(body, signature), [stranger.trusted], 'm.json')),
    ).toMatchObject({
      code: 'GW_MANIFEST_REFUSED',
      data: { reason: 'untrusted_key', kid: author.trusted.kid },
    });
    const edited = { ...body, catalog: `sha256:${'1'.repeat(64)}` };
    expect(
      refusal(() => verifyCatalogManifest(documentOf(edited, signature), [author.trusted], 'm.json')).data,
    ).toMatchObject({
      reason: 'bad_signature',
    });
    const pinSigned = detach(await author.sign(body, { typ: 'toolpin-pin+jws' }));
    expect(
      refusal(() => verifyCatalogManifest(documentOf(body, pinSigned), [author.trusted], 'm.json')).data
        .reason,
    ).toBe('malformed');
    const later = Date.parse('2027-01-01T00:00:00Z');
    expect(
      refusal(() => verifyCatalogManifest(documentOf(body, signature), [author.trusted], 'm.json', later))
        .message,
    ).toContain('it expired at 2026-12-31T00:00:00.000Z');
  });

  it('refuses a manifest that names a tool twice or carries a member toolpin does not read', () => {
    const body = bodyOf();
    const twice = { ...body, tools: [...body.tools, body.tools[0]] };
    expect(refusal(() => documentOf(twice as ManifestBody, 'a..b')).message).toContain(
      'manifest.tools[2].name',
    );
    expect(refusal(() => documentOf({ ...body, trust: {} } as ManifestBody, 'a..b')).code).toBe(
      'GW_MANIFEST_REFUSED',
    );
  });

  it('compares item by item: changed, missing, added, and the surfaces it states', () => {
    const stated = statedDigests(bodyOf());
    const same = pinFromSurfaces(pinFromCatalog(TOOLS, TRACE_PROFILE), { prompts: PROMPTS });
    expect(diffAgainstManifest(stated, same.pin)).toEqual([]);
    const drifted = [
      { ...TOOLS[0], description: 'Echoes, and more.' },
      { name: 'evil', inputSchema: { type: 'object' } },
    ];
    const observed = pinFromCatalog(drifted, TRACE_PROFILE).pin;
    const differences = diffAgainstManifest(stated, observed);
    expect(
      differences.map(({ surface, key, stated: want, observed: have }) => [
        surface,
        key,
        want !== undefined,
        have !== undefined,
      ]),
    ).toEqual([
      ['tools', 'tool:add', true, false],
      ['tools', 'tool:echo', true, true],
      ['tools', 'tool:evil', false, true],
      // Prompts are stated, and the server serves none.
      ['prompts', 'prompt:greet', true, false],
    ]);
  });
});
