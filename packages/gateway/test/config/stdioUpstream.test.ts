import { GatewayError } from '../../src/errors.js';
import {
  describeUpstream,
  isStdioUpstream,
  parsePinFile,
  parseServerConfig,
  serializePinFile,
  upstreamIdentity,
} from '../../src/config/index.js';
import { validPin } from './fixtures.js';

const FILE = '/pins/local.yaml';

function stdioPin(upstream: Record<string, unknown>): Record<string, unknown> {
  return { ...validPin(), name: 'local', upstream };
}

function rejection(value: unknown): GatewayError {
  try {
    parseServerConfig(value, FILE);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected the pin file to be rejected');
}

describe('a pin file with a stdio upstream', () => {
  test('parses command, args, env and cwd, with defaults for the optional ones', () => {
    const full = parseServerConfig(
      stdioPin({ command: ['node', 'server.js'], args: ['--quiet'], env: { API_KEY: 'k' }, cwd: 'srv' }),
      FILE,
    );
    expect(full.upstream).toEqual({
      command: ['node', 'server.js'],
      args: ['--quiet'],
      env: { API_KEY: 'k' },
      passEnv: [],
      cwd: 'srv',
    });
    expect(isStdioUpstream(full.upstream)).toBe(true);
    const bare = parseServerConfig(stdioPin({ command: ['node', 'server.js'] }), FILE);
    expect(bare.upstream).toEqual({ command: ['node', 'server.js'], args: [], env: {}, passEnv: [] });
  });

  test('takes a single program as a string and keeps it as a one-element command', () => {
    const server = parseServerConfig(stdioPin({ command: 'mcp-server-files' }), FILE);
    expect(server.upstream).toEqual({ command: ['mcp-server-files'], args: [], env: {}, passEnv: [] });
  });

  test('rejects url and command together, naming the command field', () => {
    const error = rejection(stdioPin({ url: 'http://127.0.0.1:1/mcp', command: ['node'] }));
    expect(error.code).toBe('GW_PIN_FILE_INVALID');
    expect(error.data.field).toBe('upstream.command');
  });

  test.each([
    [{ command: [] }, 'upstream.command'],
    [{ command: ['node'], shell: true }, 'upstream.shell'],
    [{ command: ['node'], env: { 'BAD-NAME': 'x' } }, 'upstream.env'],
    [{ command: ['node'], passEnv: ['BAD-NAME'] }, 'upstream.passEnv[0]'],
    [{ command: ['node'], passEnv: 'API_KEY' }, 'upstream.passEnv'],
    [{ command: ['node'], args: 'server.js' }, 'upstream.args'],
    [{ command: ['node'], headers: {} }, 'upstream.headers'],
  ])('rejects %j at %s', (upstream, field) => {
    const error = rejection(stdioPin(upstream));
    expect(error.code).toBe('GW_PIN_FILE_INVALID');
    expect(String(error.data.field)).toContain(field);
  });

  test.each(['yaml', 'json'] as const)('round-trips through %s, leaving empty args and env out', (format) => {
    const server = parseServerConfig(
      stdioPin({ command: ['node', 'server.js'], env: { B: '2', A: '1' }, passEnv: ['Z_KEY', 'C_KEY'] }),
      FILE,
    );
    const text = serializePinFile(server, format);
    // Names only, sorted: a pin written by protect holds no values.
    expect(text.indexOf('C_KEY')).toBeLessThan(text.indexOf('Z_KEY'));
    expect(text).not.toContain('args');
    expect(text.indexOf('A')).toBeLessThan(text.indexOf('B'));
    expect(parsePinFile(text, FILE)).toEqual({
      ...server,
      upstream: { ...server.upstream, passEnv: ['C_KEY', 'Z_KEY'] },
    });
  });

  test('identifies the upstream by command, args, env and cwd; logs only the program', () => {
    const a = parseServerConfig(stdioPin({ command: ['node', 'a.js'], env: { TOKEN: 'secret' } }), FILE);
    const b = parseServerConfig(stdioPin({ command: ['node', 'b.js'], env: { TOKEN: 'secret' } }), FILE);
    expect(upstreamIdentity(a.upstream)).not.toBe(upstreamIdentity(b.upstream));
    // The variables passed on by name are part of it (their order is not).
    const named = (passEnv: string[]) =>
      upstreamIdentity(parseServerConfig(stdioPin({ command: ['node', 'a.js'], passEnv }), FILE).upstream);
    expect(named(['A', 'B'])).toBe(named(['B', 'A']));
    expect(named(['A'])).not.toBe(named(['A', 'B']));
    expect(describeUpstream(a.upstream)).toBe('stdio:node');
    const http = parseServerConfig(validPin(), FILE);
    expect(upstreamIdentity(http.upstream)).not.toBe(
      upstreamIdentity({ ...http.upstream, transport: 'sse' }),
    );
  });
});
