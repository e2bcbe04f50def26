import { parsePinFile, parseServerConfig, serializePinFile } from '../../src/config/index.js';
import { GatewayError } from '../../src/errors.js';
import { TOOLS } from './fixtures.js';

const FILE = '/pins/demo.yaml';
const PENDING = { name: 'demo', upstream: { url: 'http://127.0.0.1:3001/mcp' }, pin: 'trust-on-first-use' };

function problem(value: unknown): Record<string, unknown> {
  try {
    parseServerConfig(value, FILE);
  } catch (error) {
    if (error instanceof GatewayError) return { code: error.code, ...error.data };
  }
  throw new Error('expected a GatewayError');
}

describe('pin: trust-on-first-use', () => {
  it('parses into an empty pin marked as waiting for its first observation', () => {
    const server = parseServerConfig(PENDING, FILE);
    expect(server.trustOnFirstUse).toBe(true);
    expect(server.pin).toEqual({
      catalog: 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      tools: {},
    });
    expect(server.definitions).toEqual({});
  });

  it('is written back as the marker, and a pinned file carries no marker', () => {
    const text = serializePinFile(parseServerConfig(PENDING, FILE), 'yaml');
    expect(text).toContain('pin: trust-on-first-use\n');
    expect(parsePinFile(text, FILE).trustOnFirstUse).toBe(true);
    expect(
      Object.keys(
        parseServerConfig(
          {
            ...PENDING,
            pin: {
              catalog: 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
              tools: {},
            },
          },
          FILE,
        ),
      ),
    ).not.toContain('trustOnFirstUse');
  });

  it('rejects another word naming the pin field, and definitions beside the marker', () => {
    expect(problem({ ...PENDING, pin: 'trust-always' })).toMatchObject({
      code: 'GW_PIN_FILE_INVALID',
      field: 'pin',
      expected: 'a mapping',
    });
    expect(problem({ ...PENDING, definitions: { 'tool:echo': TOOLS[0] } })).toMatchObject({
      field: 'definitions["tool:echo"]',
      expected: 'a key that is also in pin.tools',
    });
  });
});
