import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { canonicalizeJson, digestCatalog, TRACE_PROFILE } from '@toolpin/digest';
import { CompactSign, importJWK } from 'jose';
import { MANIFEST_SIGNATURE_TYPE } from '../../src/config/catalogManifest.js';
import { manifestFromCatalog } from '../../src/config/manifestDigests.js';
import { pinFromCatalog } from '../../src/config/pinFromCatalog.js';
import { readTrustedKey } from '../../src/config/pinSignature.js';
import { parsePinFile, parseServerConfig } from '../../src/config/index.js';
import { FirstUseRecorder } from '../../src/checkpoint/trustOnFirstUse.js';
import { createLogger } from '../../src/observe/logger.js';

const TOOLS = [
  { name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' } },
  { name: 'add', description: 'Adds.', inputSchema: { type: 'object' } },
];
const TEXT =
  '# first use\nname: demo\nupstream: { url: "http://127.0.0.1:3001/mcp" }\npin: trust-on-first-use # until the first listing\n';

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('FirstUseRecorder', () => {
  let dir: string;
  let file: string;
  let lines: Record<string, unknown>[];
  let recorder: FirstUseRecorder;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-tofu-'));
    file = join(dir, 'demo.yaml');
    await writeFile(file, TEXT);
    lines = [];
    recorder = new FirstUseRecorder(
      createLogger({
        destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
      }),
    );
  });

  afterEach(async () => {
    await until(
      () =>
        lines.some((line) => line.event === 'pin.written' || line.event === 'pin.write_failed') ||
        !lines.some((line) => line.event === 'pin.trusted_on_first_use'),
      'the write to settle',
    );
    await rm(dir, { recursive: true, force: true });
  });

  const events = (event: string): Record<string, unknown>[] => lines.filter((line) => line.event === event);

  it('gathers every page of a listing and pins the whole catalog when the last page arrives', async () => {
    const pending = parsePinFile(TEXT, file);
    expect(recorder.observePage(pending, 's1', [TOOLS[0]], true, false)).toBeUndefined();
    const pinned = recorder.observePage(pending, 's1', [TOOLS[1]], false, true);
    const expected = digestCatalog(TOOLS);
    expect(pinned?.pin).toEqual({ catalog: expected.catalog, tools: expected.entries });
    expect(pinned?.trustOnFirstUse).toBeUndefined();
    expect(events('pin.trusted_on_first_use')).toEqual([
      expect.objectContaining({ level: 40, server: 'demo', file, tools: 2 }),
    ]);
    await until(
      async () => !(await readFile(file, 'utf8')).includes('pin: trust-on-first-use'),
      'the file to be rewritten',
    );
    const text = await readFile(file, 'utf8');
    expect(text.startsWith('# first use\n')).toBe(true);
    expect(parsePinFile(text, file).pin).toEqual(pinned?.pin);
  });

  it("pins nothing from a firstUseManifest read without a gateway file's manifestKeys (not verified)", async () => {
    const text = `${TEXT}firstUseManifest: ./demo.manifest.json\n`;
    const pending = parsePinFile(text, file);
    expect(pending.firstUseManifest).toEqual({ unverified: './demo.manifest.json' });
    expect(recorder.observePage(pending, 's1', TOOLS, true, true)).toBeUndefined();
    expect(events('pin.first_use_refused')).toEqual([
      expect.objectContaining({ level: 40, server: 'demo', problem: 'manifest not verified' }),
    ]);
    expect(events('pin.trusted_on_first_use')).toEqual([]);
  });

  it('pins from a verified firstUseManifest only the listing it states, and writes approvedBy in the YAML', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const trusted = readTrustedKey(publicKey.export({ format: 'pem', type: 'spki' }).toString(), 'acme.pem');
    const body = manifestFromCatalog(
      { ...pinFromCatalog(TOOLS, TRACE_PROFILE), profile: TRACE_PROFILE },
      { name: 'demo', version: '1.0.0' },
      { issuedAt: new Date() },
    );
    const jws = await new CompactSign(new TextEncoder().encode(canonicalizeJson(body)))
      .setProtectedHeader({ alg: 'EdDSA', kid: trusted.kid, typ: MANIFEST_SIGNATURE_TYPE })
      .sign(await importJWK({ ...privateKey.export({ format: 'jwk' }), alg: 'EdDSA' }, 'EdDSA'));
    await writeFile(join(dir, 'demo.manifest.json'), JSON.stringify({ manifest: body, signature: jws }));
    const text = `${TEXT}firstUseManifest: ./demo.manifest.json\n`;
    await writeFile(file, text);
    const pending = parsePinFile(text, file, {
      requireSignature: false,
      trustedKeys: [],
      manifestKeys: [trusted],
    });
    // A listing that is not the manifest's (echo alone) pins nothing; the whole catalog does.
    expect(recorder.observePage(pending, 's1', [TOOLS[0]], true, true)).toBeUndefined();
    expect(events('pin.first_use_refused')[0]?.differences).toEqual([
      expect.stringMatching(/^- tool add: in the manifest, not served$/),
    ]);
    const pinned = recorder.observePage(pending, 's2', TOOLS, true, true);
    expect(pinned?.approvedBy).toMatchObject({ via: 'manifest', kid: trusted.kid, server: 'demo@1.0.0' });
    expect(events('pin.approved_by_manifest')).toHaveLength(1);
    await until(
      async () => (await readFile(file, 'utf8')).includes('approvedBy:'),
      'the file to be rewritten',
    );
    const written = await readFile(file, 'utf8');
    expect(written.startsWith('# first use\n')).toBe(true);
    expect(parsePinFile(written, file).approvedBy).toEqual(pinned?.approvedBy);
  });

  it('does not trust a page whose first page it never saw, an empty catalog, or a tool without digest', () => {
    const pending = parsePinFile(TEXT, file);
    expect(recorder.observePage(pending, 's1', TOOLS, false, true)).toBeUndefined();
    expect(recorder.observePage(pending, 's2', [], true, true)).toBeUndefined();
    expect(
      recorder.observePage(
        pending,
        's3',
        [...TOOLS, { name: 'bad', description: Number.POSITIVE_INFINITY }],
        true,
        true,
      ),
    ).toBeUndefined();
    expect(
      recorder.observePage(
        pending,
        's4',
        [...TOOLS, { name: 'nan', inputSchema: { default: Number.NaN } }],
        true,
        true,
      ),
    ).toBeUndefined();
    expect(events('pin.first_use_skipped').map((line) => line.problem)).toEqual([
      'empty catalog',
      expect.stringContaining('"bad" at index 2 has no digest'),
      expect.stringContaining('"nan" at index 2 has no digest'),
    ]);
    expect(events('pin.trusted_on_first_use')).toEqual([]);
  });

  it('leaves a server that is already pinned alone', () => {
    const pinned = parseServerConfig(
      {
        name: 'demo',
        upstream: { url: 'http://127.0.0.1:3001/mcp' },
        pin: { catalog: digestCatalog(TOOLS).catalog, tools: digestCatalog(TOOLS).entries },
      },
      file,
    );
    expect(recorder.observePage(pinned, 's1', TOOLS, true, true)).toBeUndefined();
    expect(lines).toEqual([]);
  });
});
