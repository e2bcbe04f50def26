import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import {
  loadGatewayConfig,
  parsePinFile,
  parseServerConfig,
  serializePinFile,
} from '../../src/config/index.js';
import { GatewayError } from '../../src/errors.js';
import { tempDir, validPin, writeIn } from './fixtures.js';

const SECRET = 'whsec-0123456789abcdef';

describe('alerts, shutdown and revalidation in the gateway file', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    await mkdir(join(dir, 'servers'));
  });
  afterEach(() => cleanup());

  const load = async (
    document: Record<string, unknown>,
  ): Promise<Awaited<ReturnType<typeof loadGatewayConfig>>> =>
    loadGatewayConfig(await writeIn(dir, 'gateway.yaml', stringify({ servers: './servers', ...document })));

  test('leaves the blocks out when they are not written', async () => {
    const config = await load({});
    expect(config.alerts).toBeUndefined();
    expect(config.shutdown).toBeUndefined();
    expect('revalidateMs' in config.sessions).toBe(false);
  });

  test('reads webhooks with their defaults, a grace period and a revalidation age', async () => {
    const config = await load({
      alerts: { webhooks: [{ url: 'https://hooks.example/t/abc', secret: SECRET }] },
      shutdown: { graceMs: 2500 },
      sessions: { revalidateMs: 0 },
    });
    expect(config.alerts).toEqual({
      dedupeSeconds: 300,
      aggregateSeconds: 10,
      webhooks: [
        {
          url: 'https://hooks.example/t/abc',
          secret: SECRET,
          events: ['catalog.drift', 'call.blocked', 'call.flagged'],
          maxAttempts: 5,
          timeoutMs: 5000,
          queueSize: 1000,
        },
      ],
    });
    expect(config.shutdown).toEqual({ graceMs: 2500 });
    expect(config.sessions).toEqual({ max: 10000, ttlSeconds: 3600, revalidateMs: 0 });
    expect(Object.isFrozen(config.alerts?.webhooks[0])).toBe(true);
  });

  test('reads the secret from the environment with secretEnv', async () => {
    process.env.TOOLPIN_TEST_WEBHOOK_SECRET = SECRET;
    try {
      const config = await load({
        alerts: {
          webhooks: [
            {
              url: 'http://127.0.0.1:9/h',
              secretEnv: 'TOOLPIN_TEST_WEBHOOK_SECRET',
              events: ['call.blocked'],
            },
          ],
        },
      });
      expect(config.alerts?.webhooks[0]).toMatchObject({
        secret: SECRET,
        secretEnv: 'TOOLPIN_TEST_WEBHOOK_SECRET',
        events: ['call.blocked'],
      });
    } finally {
      delete process.env.TOOLPIN_TEST_WEBHOOK_SECRET;
    }
  });

  test.each([
    ['no secret at all', { url: 'http://127.0.0.1:9/h' }, 'alerts.webhooks[0].secret', 'exactly one of'],
    [
      'both secret and secretEnv',
      { url: 'http://127.0.0.1:9/h', secret: SECRET, secretEnv: 'X' },
      'alerts.webhooks[0].secret',
      'exactly one of',
    ],
    [
      'a short secret',
      { url: 'http://127.0.0.1:9/h', secret: 'short' },
      'alerts.webhooks[0].secret',
      'length >= 16',
    ],
    [
      'an unset secretEnv',
      { url: 'http://127.0.0.1:9/h', secretEnv: 'TOOLPIN_TEST_UNSET_VARIABLE' },
      'alerts.webhooks[0].secretEnv',
      'is not set',
    ],
    [
      'an unknown event',
      { url: 'http://127.0.0.1:9/h', secret: SECRET, events: ['catalog.changed'] },
      'alerts.webhooks[0].events[0]',
      'one of',
    ],
    ['a non-http url', { url: 'ftp://example.com/h', secret: SECRET }, 'alerts.webhooks[0].url', 'http'],
    [
      'an unknown key',
      { url: 'http://127.0.0.1:9/h', secret: SECRET, retries: 3 },
      'alerts.webhooks[0].retries',
      'only known keys',
    ],
  ])('rejects %s, naming the field', async (_label, hook, field, expected) => {
    const error = await load({ alerts: { webhooks: [hook] } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('GW_CONFIG_INVALID');
    expect((error as GatewayError).data.field).toBe(field);
    expect((error as GatewayError).message).toContain(expected);
    expect((error as GatewayError).message).not.toContain(SECRET);
  });

  test('rejects a negative grace period and an unknown shutdown key', async () => {
    await expect(load({ shutdown: { graceMs: -1 } })).rejects.toMatchObject({
      data: { field: 'shutdown.graceMs' },
    });
    await expect(load({ shutdown: { timeout: 1 } })).rejects.toMatchObject({
      data: { field: 'shutdown.timeout' },
    });
  });
});

describe('alerts in a pin file', () => {
  test('are parsed, and absent when not written', () => {
    expect(parseServerConfig(validPin(), 'demo.yaml').alerts).toBeUndefined();
    const server = parseServerConfig(
      {
        ...validPin(),
        alerts: { webhooks: [{ url: 'http://127.0.0.1:9/h', secret: SECRET, name: 'oncall' }] },
      },
      'demo.yaml',
    );
    expect(server.alerts?.webhooks[0]).toMatchObject({
      url: 'http://127.0.0.1:9/h',
      name: 'oncall',
      secret: SECRET,
      maxAttempts: 5,
    });
  });

  test('take minSeverity (high or low), keep it through serialization, and reject anything else', () => {
    const withMin = (minSeverity: unknown): unknown => ({
      ...validPin(),
      alerts: { webhooks: [{ url: 'http://127.0.0.1:9/h', secret: SECRET, minSeverity }] },
    });
    const server = parseServerConfig(withMin('high'), 'demo.yaml');
    expect(server.alerts?.webhooks[0]?.minSeverity).toBe('high');
    expect(parsePinFile(serializePinFile(server, 'yaml'), 'demo.yaml').alerts).toEqual(server.alerts);
    expect(() => parseServerConfig(withMin('medium'), 'demo.yaml')).toThrow(
      'alerts.webhooks[0].minSeverity: expected one of "high", "low"',
    );
  });

  test('reject dedupeSeconds (a gateway-wide setting)', () => {
    expect(() =>
      parseServerConfig({ ...validPin(), alerts: { webhooks: [], dedupeSeconds: 1 } }, 'demo.yaml'),
    ).toThrow(/alerts\.dedupeSeconds/);
  });

  test('survive serialization, a secretEnv written back by name, never by value', () => {
    process.env.TOOLPIN_TEST_PIN_SECRET = SECRET;
    try {
      const server = parseServerConfig(
        {
          ...validPin(),
          alerts: {
            webhooks: [
              { url: 'http://127.0.0.1:9/a', secretEnv: 'TOOLPIN_TEST_PIN_SECRET' },
              { url: 'http://127.0.0.1:9/b', secret: SECRET },
            ],
          },
        },
        'demo.yaml',
      );
      const text = serializePinFile(server, 'yaml');
      const document = parse(text) as { alerts: { webhooks: Record<string, unknown>[] } };
      expect(document.alerts.webhooks[0]).toMatchObject({ secretEnv: 'TOOLPIN_TEST_PIN_SECRET' });
      expect(document.alerts.webhooks[0]).not.toHaveProperty('secret');
      expect(text.split(SECRET)).toHaveLength(2);
      expect(parseServerConfig(document, 'demo.yaml')).toEqual(server);
    } finally {
      delete process.env.TOOLPIN_TEST_PIN_SECRET;
    }
  });
});
