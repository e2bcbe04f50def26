import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadGatewayConfig, loadSinglePinConfig } from '../../src/config/index.js';
import { tempDir, validPin, writeIn } from './fixtures.js';

describe('loading the gateway file', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    await mkdir(join(dir, 'conf', 'servers'), { recursive: true });
  });
  afterEach(() => cleanup());

  test('applies the defaults, with the admin API on loopback', async () => {
    const file = await writeIn(join(dir, 'conf'), 'gateway.yaml', 'servers: ./servers\n');
    const config = await loadGatewayConfig(file);
    expect(config).toEqual({
      file,
      listen: { host: '127.0.0.1', port: 8080 },
      admin: { host: '127.0.0.1', port: 8081 },
      serversDir: join(dir, 'conf', 'servers'),
      limits: { maxBodyBytes: 4194304, upstreamTimeoutMs: 30000, streamIdleMs: 300000 },
      sessions: { max: 10000, ttlSeconds: 3600 },
      log: { level: 'info' },
      servers: [],
    });
    expect(Object.isFrozen(config.admin)).toBe(true);
  });

  test('resolves the servers folder against the gateway file, not the working directory', async () => {
    await writeIn(join(dir, 'conf', 'servers'), 'demo.yaml', stringify(validPin()));
    const file = await writeIn(join(dir, 'conf'), 'gateway.yaml', 'servers: servers\n');
    const config = await loadGatewayConfig(file);
    expect(config.serversDir).toBe(join(dir, 'conf', 'servers'));
    expect(config.servers.map((s) => s.name)).toEqual(['demo']);
    expect(Object.isFrozen(config.servers[0]?.pin)).toBe(true);
  });

  test('reads every documented member, port 0 and an admin token included', async () => {
    const text = stringify({
      listen: { host: '0.0.0.0', port: 0 },
      admin: { host: '127.0.0.1', port: 0, token: 'secret-token' },
      servers: './servers',
      limits: { maxBodyBytes: 1024, upstreamTimeoutMs: 500, streamIdleMs: 2000 },
      sessions: {
        max: 10,
        ttlSeconds: 60,
        bridgedPerClient: 2,
        bridgedPerAddress: 6,
        bridgedIdleSeconds: 30,
      },
      log: { level: 'silent' },
    });
    const config = await loadGatewayConfig(await writeIn(join(dir, 'conf'), 'gateway.yaml', text));
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 0 });
    expect(config.admin).toEqual({ host: '127.0.0.1', port: 0, token: 'secret-token' });
    expect(config.limits).toEqual({ maxBodyBytes: 1024, upstreamTimeoutMs: 500, streamIdleMs: 2000 });
    expect(config.sessions).toEqual({
      max: 10,
      ttlSeconds: 60,
      bridgedPerClient: 2,
      bridgedPerAddress: 6,
      bridgedIdleSeconds: 30,
    });
    expect(config.log.level).toBe('silent');
  });

  test.each([
    ['an unknown top-level key', 'servers: ./servers\nlisten_port: 80\n', 'listen_port'],
    ['an unknown key inside admin', 'servers: ./servers\nadmin: { bind: 0.0.0.0 }\n', 'admin.bind'],
    ['a port out of range', 'servers: ./servers\nlisten: { port: 70000 }\n', 'listen.port'],
    ['a port that is not an integer', 'servers: ./servers\nadmin: { port: "8081" }\n', 'admin.port'],
    ['a missing servers folder path', 'listen: { port: 8080 }\n', 'servers'],
    ['an unknown log level', 'servers: ./servers\nlog: { level: verbose }\n', 'log.level'],
    ['a zero body limit', 'servers: ./servers\nlimits: { maxBodyBytes: 0 }\n', 'limits.maxBodyBytes'],
    ['an empty admin token', 'servers: ./servers\nadmin: { token: "" }\n', 'admin.token'],
    [
      'a zero per-client session quota',
      'servers: ./servers\nsessions: { bridgedPerClient: 0 }\n',
      'sessions.bridgedPerClient',
    ],
    [
      'a zero per-address session quota',
      'servers: ./servers\nsessions: { bridgedPerAddress: 0 }\n',
      'sessions.bridgedPerAddress',
    ],
    ['a duplicate key', 'servers: ./servers\nservers: ./other\n', ''],
    ['a cors block without origins', 'servers: ./servers\ncors: { credentials: true }\n', 'cors.origins'],
    [
      'a cors origin with a path',
      'servers: ./servers\ncors: { origins: ["https://app.example.com/"] }\n',
      'cors.origins[0]',
    ],
    [
      'cors credentials with any origin',
      'servers: ./servers\ncors: { origins: ["*"], credentials: true }\n',
      'cors.credentials',
    ],
    ['an unknown trace exporter', 'servers: ./servers\ntelemetry: { traces: zipkin }\n', 'telemetry.traces'],
    [
      'a telemetry endpoint that is not an http(s) URL',
      'servers: ./servers\ntelemetry: { endpoint: "grpc://collector:4317" }\n',
      'telemetry.endpoint',
    ],
  ])('rejects %s, naming the file and the field', async (_case, text, field) => {
    const file = await writeIn(join(dir, 'conf'), 'gateway.yaml', text);
    const error = await loadGatewayConfig(file).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'GW_CONFIG_INVALID', data: { file, field } });
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toContain(field);
  });

  test('reads a cors block with its defaults; absent, there is none', async () => {
    const file = await writeIn(
      join(dir, 'conf'),
      'gateway.yaml',
      'servers: ./servers\ncors: { origins: ["https://app.example.com", "http://localhost:5173"] }\n',
    );
    expect((await loadGatewayConfig(file)).cors).toEqual({
      origins: ['https://app.example.com', 'http://localhost:5173'],
      credentials: false,
      maxAgeSeconds: 600,
    });
    const plain = await writeIn(join(dir, 'conf'), 'plain.yaml', 'servers: ./servers\n');
    expect((await loadGatewayConfig(plain)).cors).toBeUndefined();
  });

  test('reads a telemetry block with only the keys written; absent, there is none', async () => {
    const file = await writeIn(
      join(dir, 'conf'),
      'gateway.yaml',
      'servers: ./servers\ntelemetry: { traces: otlp, endpoint: "http://127.0.0.1:4318/v1/traces" }\n',
    );
    expect((await loadGatewayConfig(file)).telemetry).toEqual({
      traces: 'otlp',
      endpoint: 'http://127.0.0.1:4318/v1/traces',
    });
    const plain = await writeIn(join(dir, 'conf'), 'plain.yaml', 'servers: ./servers\n');
    expect((await loadGatewayConfig(plain)).telemetry).toBeUndefined();
  });

  test('names a misspelt cors key, with the key it most likely meant', async () => {
    const file = await writeIn(
      join(dir, 'conf'),
      'gateway.yaml',
      'servers: ./servers\ncors: { origin: ["https://app.example.com"] }\n',
    );
    const error = await loadGatewayConfig(file).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'GW_CONFIG_INVALID', data: { file, field: 'cors.origin' } });
    expect((error as Error).message).toContain('did you mean "origins"');
  });

  test('serves one pin file alone with the gateway file defaults, only that file of its folder', async () => {
    const pin = await writeIn(join(dir, 'conf', 'servers'), 'demo.yaml', stringify(validPin()));
    await writeIn(join(dir, 'conf', 'servers'), 'other.yaml', stringify({ ...validPin(), name: 'other' }));
    const config = await loadSinglePinConfig(pin);
    expect(config).toMatchObject({
      file: pin,
      pinFile: pin,
      serversDir: join(dir, 'conf', 'servers'),
      listen: { host: '127.0.0.1', port: 8080 },
      admin: { host: '127.0.0.1', port: 8081 },
      log: { level: 'info' },
    });
    expect(config.servers.map((server) => server.name)).toEqual(['demo']);
    expect(Object.isFrozen(config)).toBe(true);
  });

  test('rejects a servers folder that does not exist, naming the servers field', async () => {
    const file = await writeIn(join(dir, 'conf'), 'gateway.yaml', 'servers: ./nowhere\n');
    await expect(loadGatewayConfig(file)).rejects.toMatchObject({
      code: 'GW_CONFIG_INVALID',
      data: { file, field: 'servers', serversDir: join(dir, 'conf', 'nowhere'), reason: 'ENOENT' },
    });
  });

  test('passes on the error of a broken pin file in the servers folder', async () => {
    const pin = await writeIn(
      join(dir, 'conf', 'servers'),
      'demo.yaml',
      stringify({ ...validPin(), mode: 'audit' }),
    );
    const file = await writeIn(join(dir, 'conf'), 'gateway.yaml', 'servers: ./servers\n');
    await expect(loadGatewayConfig(file)).rejects.toMatchObject({
      code: 'GW_PIN_FILE_INVALID',
      data: { file: pin, field: 'mode' },
    });
  });
});
