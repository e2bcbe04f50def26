import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { stringify } from 'yaml';
import { GatewayError } from '../../src/errors.js';
import { loadGatewayConfig, loadPrincipals, parseServerConfig } from '../../src/config/index.js';
import { tempDir, validPin, writeIn } from './fixtures.js';

describe('the principals block of the gateway file', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir());
    await mkdir(`${dir}/servers`);
  });
  afterAll(() => cleanup());

  const write = (principals: unknown): Promise<string> =>
    writeIn(dir, 'gateway.yaml', stringify({ servers: './servers', principals }));

  test('absent: no scopes (every principal sees everything pinned)', async () => {
    const file = await writeIn(dir, 'plain.yaml', stringify({ servers: './servers' }));
    expect((await loadGatewayConfig(file)).principals).toBeUndefined();
    expect(await loadPrincipals(file)).toBeUndefined();
  });

  test('keeps only the SHA-256 of a key read from the environment, and each server per surface', async () => {
    process.env.TOOLPIN_TEST_PRINCIPAL_KEY = 'secret-key';
    try {
      const file = await write([
        { name: 'alice', apiKey: { env: 'TOOLPIN_TEST_PRINCIPAL_KEY' }, servers: { github: ['create_*'] } },
        { name: 'me', local: true, servers: { files: { tools: '*' } } },
      ]);
      const [alice, me] = (await loadGatewayConfig(file)).principals!;
      expect(alice).toEqual({
        name: 'alice',
        apiKeySha256: createHash('sha256').update('secret-key').digest('hex'),
        servers: { github: { tools: ['create_*'], prompts: ['create_*'], resourceTemplates: ['create_*'] } },
      });
      expect(JSON.stringify(alice)).not.toContain('secret-key');
      expect(me!.servers.files).toEqual({ tools: '*', prompts: [], resourceTemplates: [] });
    } finally {
      delete process.env.TOOLPIN_TEST_PRINCIPAL_KEY;
    }
  });

  test.each([
    [
      'two ways to recognize one principal',
      [{ name: 'a', local: true, apiKey: { sha256: 'a'.repeat(64) }, servers: {} }],
      /exactly one of apiKey, oauth, local/,
    ],
    ['no way at all', [{ name: 'a', servers: {} }], /exactly one of apiKey, oauth, local/],
    [
      'a key hash that is not one',
      [{ name: 'a', apiKey: { sha256: 'abc' }, servers: {} }],
      /principals\[0\]\.apiKey/,
    ],
    [
      'an unset key variable',
      [{ name: 'a', apiKey: { env: 'TOOLPIN_TEST_UNSET_KEY' }, servers: {} }],
      /principals\[0\]\.apiKey\.env/,
    ],
    [
      'two principals of one name',
      [
        { name: 'a', local: true, servers: {} },
        { name: 'a', local: true, servers: {} },
      ],
      /a second principal named a/,
    ],
    ['an unknown member', [{ name: 'a', local: true, servers: {}, tools: [] }], /tools/],
    ['an empty oauth match', [{ name: 'a', oauth: {}, servers: {} }], /at least one of issuer/],
  ])('refuses %s, naming the field', async (_what, principals, message) => {
    const file = await write(principals);
    const error = await loadGatewayConfig(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('GW_CONFIG_INVALID');
    expect((error as GatewayError).message).toMatch(message);
    await expect(loadPrincipals(file)).rejects.toThrow(message);
  });
});

describe('catalogs per principal in a pin file', () => {
  test('an old single-catalog pin file loads unchanged: no principalPins', () => {
    const config = parseServerConfig(validPin(), 'old.json');
    expect(config.principalPins).toBeUndefined();
    expect(config.principalFirstUse).toBeUndefined();
  });

  test("each principal's catalog is verified as the file's own; an error names the entry's field", () => {
    const pin = validPin() as {
      pin: { catalog: string; tools: Record<string, string> };
      definitions: unknown;
    };
    const entry = { pin: pin.pin, definitions: pin.definitions };
    const config = parseServerConfig(
      { ...pin, principals: { alice: entry }, principalFirstUse: true },
      'multi.json',
    );
    expect(config.principalPins?.alice?.pin.catalog).toBe(pin.pin.catalog);
    expect(config.principalFirstUse).toBe(true);
    const forged = { pin: { ...pin.pin, catalog: `sha256:${'0'.repeat(64)}` }, definitions: pin.definitions };
    expect(() => parseServerConfig({ ...pin, principals: { alice: forged } }, 'forged.json')).toThrow(
      /principals\.alice\.pin\.catalog/,
    );
    expect(() => parseServerConfig({ ...pin, principals: { 'not a name': entry } }, 'bad.json')).toThrow(
      /principals/,
    );
  });
});
