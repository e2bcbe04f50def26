import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalizeJson, TRACE_PROFILE } from '@toolpin/digest';
import { compactVerify, createLocalJWKSet } from 'jose';
import { startGatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { until } from '../support/until.js';
import { initializeRequest } from '../support/rawMcp.js';
import { useScoped } from '../support/useScoped.js';
import { answerJson, startMaliciousUpstream, type UpstreamExchange } from './support/maliciousUpstream.js';
import { exchangeRaw, headerOf, rawPost } from './support/rawClient.js';
import { openSession, postJson, startRig } from './support/rig.js';
import { ECHO, PINNED_TOOLS } from './support/tools.js';

// Red team 5 (the changes of issues 27 and 28): each attack is shown real against a direct upstream
// first, then through the gateway.

const KEYS = { full: 'full-key-0123456789', narrow: 'narrow-key-9876543210' } as const;
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Opens a 2025-06-18 session speaking for the principal of `key`; the headers its requests carry. */
async function openKeyed(url: string, key: string): Promise<Record<string, string>> {
  const reply = await postJson(url, initializeRequest('init-1'), { 'X-Toolpin-Key': key });
  if (reply.status !== 200) throw new Error(`initialize answered HTTP ${reply.status}: ${reply.body}`);
  const headers: Record<string, string> = { 'Mcp-Protocol-Version': '2025-06-18', 'X-Toolpin-Key': key };
  const session = headerOf(reply, 'mcp-session-id');
  if (session !== undefined) headers['Mcp-Session-Id'] = session;
  await postJson(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return headers;
}

// A tools/list answer that also carries prompts nobody asked for: one a narrow principal may see, one not.
const SECRET_MARK = 'SECRET-PROMPT-41b7';
const LISTING_WITH_PROMPTS = {
  tools: [ECHO],
  prompts: [
    { name: 'public', description: 'a prompt everyone may see' },
    { name: 'secret', description: `${SECRET_MARK} internal prompt` },
  ],
};

describe('redteam5: a verified listing replayed to a principal of narrower scope', () => {
  const rig = useScoped(() =>
    startRig({
      gateway: {
        principals: [
          { name: 'full', apiKey: { sha256: sha256(KEYS.full) }, servers: { mal: '*' } },
          {
            name: 'narrow',
            apiKey: { sha256: sha256(KEYS.narrow) },
            servers: { mal: { tools: '*', prompts: ['public'], resourceTemplates: [] } },
          },
        ],
      },
    }),
  );

  /** Answers every tools/list with {@link LISTING_WITH_PROMPTS}, byte for byte the same result. */
  function listsWithPrompts({ res, message }: UpstreamExchange): boolean {
    if (message.method !== 'tools/list') return false;
    answerJson(res, { jsonrpc: '2.0', id: message.id, result: LISTING_WITH_PROMPTS });
    return true;
  }

  it('is real: the upstream answers tools/list with a prompt out of the narrow scope', async () => {
    rig.upstream.behaviour = listsWithPrompts;
    try {
      const reply = await postJson(rig.upstream.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(reply.body).toContain(SECRET_MARK);
    } finally {
      rig.upstream.reset();
    }
  });

  it("keeps the narrow principal's unasked prompts in its scope after the full principal's identical listing", async () => {
    rig.upstream.behaviour = listsWithPrompts;
    try {
      // The full principal's listing is verified (and may be remembered); the same text then reaches the narrow one.
      const full = await openKeyed(rig.endpoint, KEYS.full);
      const fullList = await postJson(rig.endpoint, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, full);
      expect(fullList.body).toContain(SECRET_MARK);
      const narrow = await openKeyed(rig.endpoint, KEYS.narrow);
      const replayed = await postJson(rig.endpoint, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, narrow);
      expect(replayed.body).toContain('"public"');
      expect(replayed.body).not.toContain(SECRET_MARK);
    } finally {
      rig.upstream.reset();
    }
  });

  it("gives the full principal its whole listing after the narrow principal's identical one", async () => {
    rig.upstream.behaviour = listsWithPrompts;
    try {
      const narrow = await openKeyed(rig.endpoint, KEYS.narrow);
      const alone = await postJson(rig.endpoint, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, narrow);
      expect(alone.body).toContain('"public"');
      expect(alone.body).not.toContain(SECRET_MARK);
      const full = await openKeyed(rig.endpoint, KEYS.full);
      const fullList = await postJson(rig.endpoint, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, full);
      expect(fullList.body).toContain(SECRET_MARK);
    } finally {
      rig.upstream.reset();
    }
  });
});

describe('redteam5: principals trusted on first use at the same moment', () => {
  const firstUseKeys = ['ann-key-0001', 'ben-key-0002', 'cat-key-0003', 'dan-key-0004'];
  const rig = useScoped(() =>
    startRig({
      pin: { principalFirstUse: true },
      gateway: {
        principals: firstUseKeys.map((key) => ({
          name: key.slice(0, 3),
          apiKey: { sha256: sha256(key) },
          servers: { mal: '*' },
        })),
      },
    }),
  );

  it("writes every principal's first-use entry: none is lost to another's write", async () => {
    const sessions = await Promise.all(firstUseKeys.map((key) => openKeyed(rig.endpoint, key)));
    const lists = await Promise.all(
      sessions.map((headers, at) =>
        postJson(rig.endpoint, { jsonrpc: '2.0', id: at + 1, method: 'tools/list' }, headers),
      ),
    );
    for (const list of lists) expect(list.body).toContain('"echo"');
    await until(
      () =>
        rig.gateway.events('pin.written').length + rig.gateway.events('pin.write_failed').length >= 4
          ? true
          : undefined,
      'four first-use writes',
    );
    const file = join(rig.gateway.dir, 'servers', 'mal.json');
    const written = JSON.parse(await readFile(file, 'utf8')) as { principals?: Record<string, unknown> };
    expect(Object.keys(written.principals ?? {}).sort()).toEqual(['ann', 'ben', 'cat', 'dan']);
    expect(rig.gateway.events('pin.write_failed')).toEqual([]);
  });
});

/** Writes an Ed25519 public JWK and a manifest of `pinned`'s tools it signs, expiring at `expiresAt`. */
async function signedManifest(
  dir: string,
  pinned: Record<string, unknown>,
  expiresAt: Date,
  extraHeader: Record<string, unknown> = {},
): Promise<{ manifest: string; key: string }> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  const kid = createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: 'OKP', x: jwk.x }), 'utf8')
    .digest('base64url');
  const { catalog, tools } = pinned.pin as { catalog: string; tools: Record<string, string> };
  const body = {
    format: 'toolpin.catalog-manifest.v1',
    server: { name: 'mal-server' },
    issuedAt: new Date(Date.now() - 60_000).toISOString(),
    expiresAt: expiresAt.toISOString(),
    profile: TRACE_PROFILE,
    catalog,
    tools: Object.entries(tools).map(([key, digest]) => ({ name: key.replace(/^tool:/, ''), digest })),
  };
  const protectedHeader = { alg: 'EdDSA', kid, typ: 'toolpin-manifest+jws', ...extraHeader };
  const head = Buffer.from(JSON.stringify(protectedHeader)).toString('base64url');
  const payload = Buffer.from(canonicalizeJson(body)).toString('base64url');
  const sig = sign(null, Buffer.from(`${head}.${payload}`), privateKey).toString('base64url');
  const manifest = join(dir, 'mal.manifest.json');
  const key = join(dir, 'author.public.jwk');
  await writeFile(manifest, JSON.stringify({ manifest: body, signature: `${head}..${sig}` }));
  await writeFile(key, JSON.stringify(jwk));
  return { manifest, key };
}

describe('redteam5: a firstUseManifest that expires while the gateway waits for the first listing', () => {
  it('is refused at first use once expired, though it was valid at load', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolpin-rt5-manifest-'));
    const upstream = await startMaliciousUpstream();
    try {
      const pinned = pinFor('mal', upstream.url, PINNED_TOOLS);
      const expiresAt = new Date(Date.now() + 1500);
      const { manifest, key } = await signedManifest(dir, pinned, expiresAt);
      const gateway = await startGatewayHarness(
        [
          {
            name: 'mal',
            upstream: { url: upstream.url },
            pin: 'trust-on-first-use',
            firstUseManifest: manifest,
          },
        ],
        { manifestKeys: [key] },
      );
      try {
        // Verified at load; the first client lists after the manifest's expiresAt (waited out from
        // here: the gateway's start counts toward it).
        await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() + 100 - Date.now()));
        const endpoint = `${gateway.url}/mal/mcp`;
        const session = await openSession(endpoint);
        const listed = await postJson(endpoint, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
        expect(listed.status).toBe(200);
        // Settled: refused, or pinned and written (a write in flight would outlive the gateway's folder).
        const settled = ['pin.first_use_refused', 'pin.written', 'pin.write_failed'];
        await until(
          () => (settled.some((event) => gateway.events(event).length > 0) ? true : undefined),
          'the first use to settle',
        );
        expect(gateway.events('pin.approved_by_manifest')).toEqual([]);
        expect(gateway.events('pin.first_use_refused')).toEqual([
          expect.objectContaining({ server: 'mal', problem: 'manifest expired' }),
        ]);
      } finally {
        await gateway.close();
      }
    } finally {
      await upstream.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 20_000);
});

describe('redteam5: a manifest signature whose header asks for what toolpin does not do', () => {
  // RFC 7515 4.1.11: a recipient that does not understand a `crit` extension must refuse the JWS;
  // `b64: false` (RFC 7797) changes what was signed. jose, a direct verifier, refuses both.
  const HEADERS: Record<string, Record<string, unknown>> = {
    'an unknown crit extension': { crit: ['urn:example:policy'], 'urn:example:policy': 'skip-tool-check' },
    'b64 false': { b64: false, crit: ['b64'] },
  };

  it.each(Object.keys(HEADERS))('is real: jose refuses a manifest signature with %s', async (label) => {
    const dir = await mkdtemp(join(tmpdir(), 'toolpin-rt5-crit-'));
    try {
      const pinned = pinFor('mal', 'http://127.0.0.1:9/mcp', PINNED_TOOLS);
      const { manifest, key } = await signedManifest(
        dir,
        pinned,
        new Date(Date.now() + 3_600_000),
        HEADERS[label],
      );
      const document = JSON.parse(await readFile(manifest, 'utf8')) as {
        manifest: unknown;
        signature: string;
      };
      const [head, , sig] = document.signature.split('.');
      const payload = Buffer.from(canonicalizeJson(document.manifest)).toString('base64url');
      const jwks = createLocalJWKSet({
        keys: [JSON.parse(await readFile(key, 'utf8')) as Record<string, string>],
      });
      await expect(compactVerify(`${head}.${payload}.${sig}`, jwks)).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each(Object.keys(HEADERS))(
    'the gateway refuses to load a firstUseManifest signed with %s',
    async (label) => {
      const dir = await mkdtemp(join(tmpdir(), 'toolpin-rt5-crit-'));
      try {
        const url = 'http://127.0.0.1:9/mcp';
        const pinned = pinFor('mal', url, PINNED_TOOLS);
        const { manifest, key } = await signedManifest(
          dir,
          pinned,
          new Date(Date.now() + 3_600_000),
          HEADERS[label],
        );
        await expect(
          startGatewayHarness(
            [{ name: 'mal', upstream: { url }, pin: 'trust-on-first-use', firstUseManifest: manifest }],
            { manifestKeys: [key] },
          ),
        ).rejects.toMatchObject({
          code: 'GW_MANIFEST_REFUSED',
          data: expect.objectContaining({ reason: 'malformed' }),
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('redteam5: a principal whose scope names no entry for the server', () => {
  const OUTSIDER = 'outsider-key-0123456789';
  const INSIDER = 'insider-key-9876543210';
  const SECRET = 'SECRET-RESOURCE-5e2a';
  const rig = useScoped(() =>
    startRig({
      gateway: {
        principals: [
          { name: 'outsider', apiKey: { sha256: sha256(OUTSIDER) }, servers: { other: '*' } },
          { name: 'insider', apiKey: { sha256: sha256(INSIDER) }, servers: { mal: '*' } },
        ],
      },
    }),
  );

  /** Serves one private resource to whoever reads it (the upstream cannot tell principals apart). */
  function servesSecret({ res, message }: UpstreamExchange): boolean {
    if (message.method !== 'resources/read') return false;
    const contents = [{ uri: 'file:///private/payroll.csv', mimeType: 'text/csv', text: SECRET }];
    answerJson(res, { jsonrpc: '2.0', id: message.id, result: { contents } });
    return true;
  }
  const read = {
    jsonrpc: '2.0',
    id: 9,
    method: 'resources/read',
    params: { uri: 'file:///private/payroll.csv' },
  };

  it('is real: the upstream serves the resource to any request', async () => {
    rig.upstream.behaviour = servesSecret;
    try {
      expect((await postJson(rig.upstream.url, read)).body).toContain(SECRET);
    } finally {
      rig.upstream.reset();
    }
  });

  it.each([
    [
      "two keys, the insider's second",
      [
        ['X-Toolpin-Key', OUTSIDER],
        ['X-Toolpin-Key', INSIDER],
      ],
    ],
    [
      'two keys, case variants',
      [
        ['x-toolpin-key', INSIDER],
        ['X-TOOLPIN-KEY', OUTSIDER],
      ],
    ],
    [
      "an empty key beside the insider's",
      [
        ['X-Toolpin-Key', ''],
        ['X-Toolpin-Key', INSIDER],
      ],
    ],
    ['an empty key', [['X-Toolpin-Key', '']]],
    ['another spelling', [['X_Toolpin_Key', INSIDER]]],
    ['another header', [['X-Api-Key', INSIDER]]],
    ['the key as a bearer token', [['Authorization', `Bearer ${INSIDER}`]]],
  ] as const)('non-finding: %s is no key (403), nothing reaches the upstream', async (_label, headers) => {
    const before = rig.upstream.requests.length;
    const body = JSON.stringify(initializeRequest('init-1'));
    const reply = await exchangeRaw(rig.endpoint, rawPost(rig.endpoint, body, headers));
    expect(reply.status).toBe(403);
    expect(rig.upstream.requests.slice(before)).toEqual([]);
  });

  it("non-finding: the insider's key in the query string is no key (403)", async () => {
    const url = `${rig.endpoint}?x-toolpin-key=${INSIDER}`;
    const reply = await exchangeRaw(url, rawPost(url, JSON.stringify(initializeRequest('init-1'))));
    expect(reply.status).toBe(403);
  });

  it("refuses the outsider on the server's route: nothing reaches the upstream", async () => {
    rig.upstream.behaviour = servesSecret;
    try {
      const before = rig.upstream.requests.length;
      const opened = await postJson(rig.endpoint, initializeRequest('init-1'), { 'X-Toolpin-Key': OUTSIDER });
      expect(opened.status).toBe(403);
      expect(opened.body).toContain('"not_in_scope"');
      const reply = await postJson(rig.endpoint, read, {
        'X-Toolpin-Key': OUTSIDER,
        'Mcp-Protocol-Version': '2025-06-18',
      });
      expect(reply.status).toBe(403);
      expect(reply.body).not.toContain(SECRET);
      expect(rig.upstream.requests.slice(before)).toEqual([]);
      // The insider, whose scope names the server, reads it as before.
      const insider = await openKeyed(rig.endpoint, INSIDER);
      expect((await postJson(rig.endpoint, read, insider)).body).toContain(SECRET);
    } finally {
      rig.upstream.reset();
    }
  });
});
