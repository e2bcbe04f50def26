import { TRACE_PROFILE } from '@toolpin/digest';
import { parse } from 'yaml';
import { httpUpstreamOf, parsePinFile, parseServerConfig, serializePinFile } from '../../src/config/index.js';
import { pinFromCatalog } from '../../src/config/pinFromCatalog.js';
import { CATALOG, TOOL_DIGESTS, validPin } from './fixtures.js';

const FILE = '/pins/demo.yaml';

describe('serializing a pin file', () => {
  test.each(['yaml', 'json'] as const)('round-trips a parsed pin file through %s', (format) => {
    const server = parseServerConfig(validPin(), FILE);
    const text = serializePinFile(server, format);
    expect(parsePinFile(text, FILE)).toEqual(server);
  });

  test.each(['yaml', 'json'] as const)(
    'round-trips the client capabilities the pin was listed with through %s, right after upstream',
    (format) => {
      const clientCapabilities = { sampling: {}, elicitation: { form: {} } };
      const server = parseServerConfig({ ...validPin(), clientCapabilities }, FILE);
      expect(server.clientCapabilities).toEqual(clientCapabilities);
      const text = serializePinFile(server, format);
      expect(parsePinFile(text, FILE)).toEqual(server);
      const document = (format === 'yaml' ? parse(text) : JSON.parse(text)) as Record<string, unknown>;
      expect(Object.keys(document).slice(0, 3)).toEqual(['name', 'upstream', 'clientCapabilities']);
      // A pin without them (any pin written before the field existed) reads and writes as before.
      const plain = parseServerConfig(validPin(), FILE);
      expect('clientCapabilities' in plain).toBe(false);
      expect(serializePinFile(plain, format)).not.toContain('clientCapabilities');
    },
  );

  test.each(['yaml', 'json'] as const)('round-trips onDrift per severity through %s', (format) => {
    const server = parseServerConfig({ ...validPin(), onDrift: { high: 'block-server', low: 'flag' } }, FILE);
    const text = serializePinFile(server, format);
    expect(parsePinFile(text, FILE).onDrift).toEqual({ high: 'block-server', low: 'flag' });
  });

  test.each(['yaml', 'json'] as const)(
    'round-trips validate (strict, or a map with strict) through %s',
    (format) => {
      for (const validate of ['strict', { 'tool:echo': 'strict', 'tool:add': false }] as const) {
        const server = parseServerConfig({ ...validPin(), validate }, FILE);
        const text = serializePinFile(server, format);
        const document = (format === 'yaml' ? parse(text) : JSON.parse(text)) as Record<string, unknown>;
        expect(document.validate).toEqual(validate);
        expect(parsePinFile(text, FILE)).toEqual(server);
      }
      // The default (every tool checked, null read as absent) is not written.
      expect(serializePinFile(parseServerConfig(validPin(), FILE), format)).not.toContain('validate');
    },
  );

  test.each(['yaml', 'json'] as const)(
    'writes the same %s bytes whatever the input member order',
    (format) => {
      const server = parseServerConfig(validPin(), FILE);
      const upstream = httpUpstreamOf(server);
      const reordered = {
        definitions: Object.fromEntries(Object.entries(server.definitions).reverse()),
        pin: {
          tools: Object.fromEntries(Object.entries(server.pin.tools).reverse()),
          catalog: server.pin.catalog,
        },
        upstream: {
          transport: upstream.transport,
          url: upstream.url,
          headers: upstream.headers,
        },
        name: server.name,
      };
      expect(serializePinFile(reordered, format)).toBe(serializePinFile(server, format));
    },
  );

  test('writes members in the documented order with the defaults spelled out', () => {
    const text = serializePinFile(
      {
        name: 'demo',
        upstream: { url: 'http://127.0.0.1:3001/mcp' },
        pin: { catalog: CATALOG, tools: TOOL_DIGESTS },
      },
      'yaml',
    );
    const keys = text
      .split('\n')
      .filter((line) => /^\w/.test(line))
      .map((line) => line.split(':')[0]);
    expect(keys).toEqual(['name', 'upstream', 'mode', 'profile', 'onDrift', 'pin']);
    expect(text).toContain('transport: streamable-http');
    expect(text).toContain('profile: trace.mcp-tool-definition.v1');
    expect(text).not.toContain('headers');
    expect(text).not.toContain('definitions');
    expect(parsePinFile(text, FILE).pin.catalog).toBe(CATALOG);
  });

  test('writes definition members in hashed order and shared objects without YAML aliases', () => {
    const shared = { type: 'object' };
    const server = parseServerConfig(validPin(), FILE);
    const text = serializePinFile(
      {
        ...server,
        definitions: {
          'tool:echo': { inputSchema: shared, name: 'x' },
          'tool:add': { inputSchema: shared, name: 'y' },
        },
      },
      'yaml',
    );
    expect(text).not.toMatch(/[&*]a\d/);
    expect(text.indexOf('name: y')).toBeLessThan(text.indexOf('inputSchema'));
  });

  test('writes the members pinned by value after the hashed ones, sorted, and reads them back', () => {
    const tool = {
      'x-foo': { tier: 'gold' },
      _meta: { 'ui/resourceUri': 'ui://echo/app.html' },
      name: 'echo',
      icons: [{ src: 'https://example.com/echo.png' }],
      description: 'Echoes.',
    };
    const pinned = pinFromCatalog([tool], TRACE_PROFILE);
    const input = { name: 'demo', upstream: { url: 'http://127.0.0.1:3001/mcp' }, ...pinned };
    const text = serializePinFile(input, 'yaml');
    const definition = (parse(text) as { definitions: Record<string, object> }).definitions['tool:echo'];
    expect(Object.keys(definition ?? {})).toEqual(['name', 'description', '_meta', 'icons', 'x-foo']);
    const server = parsePinFile(text, FILE);
    expect(server.extraMembers).toEqual({
      'tool:echo': { _meta: tool._meta, icons: tool.icons, 'x-foo': tool['x-foo'] },
    });
    expect(serializePinFile(server, 'yaml')).toBe(text);
    expect(parsePinFile(serializePinFile(input, 'json'), '/pins/demo.json').extraMembers).toEqual(
      server.extraMembers,
    );
  });
});
