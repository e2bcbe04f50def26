import { join } from 'node:path';
import { stringify } from 'yaml';
import { AGENTAVOW_PROFILE, TRACE_PROFILE, digestCatalog } from '@toolpin/digest';
import { GatewayError } from '../../src/errors.js';
import { httpUpstreamOf, loadPinFile, parsePinFile, parseServerConfig } from '../../src/config/index.js';
import { CATALOG, TOOL_DIGESTS, TOOLS, tempDir, validPin, writeIn } from './fixtures.js';

const FILE = '/pins/demo.yaml';

/** Parses `value` as a pin file and returns the GatewayError it throws. */
function rejection(value: unknown, file = FILE): GatewayError {
  try {
    parseServerConfig(value, file);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected the pin file to be rejected');
}

function textRejection(text: string): GatewayError {
  try {
    parsePinFile(text, FILE);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected the pin file to be rejected');
}

function expectInvalid(error: GatewayError, field: string): void {
  expect(error.code).toBe('GW_PIN_FILE_INVALID');
  expect(error.data.file).toBe(FILE);
  expect(error.data.field).toBe(field);
  expect(typeof error.data.expected).toBe('string');
  expect(error.message).toContain(FILE);
  if (field !== '') expect(error.message).toContain(field);
  expect(error.message).toContain(`expected ${String(error.data.expected)}`);
}

// Each test breaks one member of an untyped document on purpose.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function withChange(change: (pin: Record<string, any>) => void): Record<string, unknown> {
  const pin = validPin();
  change(pin);
  return pin;
}

describe('loading a pin file', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ dir, cleanup } = await tempDir()));
  afterAll(() => cleanup());

  test('loads a valid YAML pin file and applies the defaults', async () => {
    const file = await writeIn(dir, 'demo.yaml', stringify(validPin()));
    const server = await loadPinFile(file);
    expect(server).toEqual({
      name: 'demo',
      file,
      upstream: {
        url: 'http://127.0.0.1:3001/mcp',
        headers: { 'X-Api-Key': 'secret' },
        transport: 'streamable-http',
      },
      mode: 'enforce',
      profile: TRACE_PROFILE,
      onDrift: 'filter',
      pin: { catalog: CATALOG, tools: TOOL_DIGESTS },
      definitions: { 'tool:echo': TOOLS[0], 'tool:add': TOOLS[1] },
      // A tools-only pin pins no other surface: no pin.prompts, pin.resourceTemplates, pin.instructions.
      promptDefinitions: {},
      templateDefinitions: {},
      extraMembers: {},
      onBadOutput: 'flag',
      validate: {},
    });
  });

  test('moves the userinfo of upstream.url into an authorization: Basic header', () => {
    const server = parseServerConfig(
      withChange((p) => {
        p.upstream.url = "http://agent:Pa'ss%20w%40rd@127.0.0.1:3001/mcp?x=1";
        p.upstream.headers = { 'X-Api-Key': 'secret' };
      }),
      FILE,
    );
    expect(server.upstream).toEqual({
      url: 'http://127.0.0.1:3001/mcp?x=1',
      headers: {
        'X-Api-Key': 'secret',
        authorization: `Basic ${Buffer.from("agent:Pa'ss w@rd").toString('base64')}`,
      },
      transport: 'streamable-http',
      authorizationFromUrl: true,
    });
  });

  test('reads onBadOutput and a per-tool validate map keyed like pin.tools', () => {
    const server = parseServerConfig(
      { ...validPin(), onBadOutput: 'block', validate: { 'tool:echo': false } },
      FILE,
    );
    expect(server.onBadOutput).toBe('block');
    expect(server.validate).toEqual({ 'tool:echo': false });
    expectInvalid(rejection({ ...validPin(), onBadOutput: 'drop' }), 'onBadOutput');
    expect(String(rejection({ ...validPin(), validate: { echo: false } }).data.field)).toMatch(/^validate/);
    expectInvalid(rejection({ ...validPin(), validate: { 'tool:echo': 'no' } }), 'validate["tool:echo"]');
  });

  test('reads validate: strict for the whole server, or strict for one tool beside true and false', () => {
    expect(parseServerConfig({ ...validPin(), validate: 'strict' }, FILE).validate).toBe('strict');
    const mixed = { 'tool:echo': 'strict', 'tool:add': true, 'tool:search': false };
    expect(parseServerConfig({ ...validPin(), validate: mixed }, FILE).validate).toEqual(mixed);
    expectInvalid(rejection({ ...validPin(), validate: 'lenient' }), 'validate');
    expectInvalid(rejection({ ...validPin(), validate: true }), 'validate');
    expectInvalid(rejection({ ...validPin(), validate: { 'tool:echo': 'STRICT' } }), 'validate["tool:echo"]');
  });

  test('keeps the members of a definition outside the six apart, pinned by value', () => {
    const meta = { 'ui/resourceUri': 'ui://echo/app.html' };
    const icons = [{ src: 'https://example.com/echo.png', mimeType: 'image/png' }];
    const server = parseServerConfig(
      withChange((p) => Object.assign(p.definitions['tool:echo'], { _meta: meta, icons, title: null })),
      FILE,
    );
    expect(server.definitions['tool:echo']).toEqual(TOOLS[0]);
    expect(server.extraMembers).toEqual({ 'tool:echo': { _meta: meta, icons } });
    expect(Object.isFrozen(server.extraMembers['tool:echo']?._meta)).toBe(true);
  });

  test('loads a valid JSON pin file', async () => {
    const pin = withChange((p) => {
      p.mode = 'monitor';
      p.onDrift = 'block-server';
      p.upstream.transport = 'sse';
      delete p.definitions;
    });
    const file = await writeIn(dir, 'demo.json', JSON.stringify(pin, null, 2));
    const server = await loadPinFile(file);
    expect(server.mode).toBe('monitor');
    expect(server.onDrift).toBe('block-server');
    expect(httpUpstreamOf(server).transport).toBe('sse');
    expect(server.definitions).toEqual({});
  });

  test('returns a deep-frozen config that shares nothing with the input', () => {
    const input = validPin();
    const server = parseServerConfig(input, FILE);
    expect(Object.isFrozen(server)).toBe(true);
    expect(Object.isFrozen(server.pin.tools)).toBe(true);
    expect(Object.isFrozen(httpUpstreamOf(server).headers)).toBe(true);
    expect(
      Object.isFrozen((server.definitions['tool:echo']?.inputSchema as { properties: object }).properties),
    ).toBe(true);
    expect(Object.isFrozen((input.definitions as Record<string, object>)['tool:echo'])).toBe(false);
  });

  test('resolves the file of a parsed text to an absolute path', () => {
    const server = parsePinFile(stringify(validPin()), 'relative/demo.yaml');
    expect(server.file).toBe(join(process.cwd(), 'relative/demo.yaml'));
  });

  test('accepts any versioned profile label when the digests were computed under it', () => {
    const digested = digestCatalog(TOOLS, { profile: AGENTAVOW_PROFILE });
    const pin = withChange((p) => {
      p.profile = AGENTAVOW_PROFILE;
      p.pin = { catalog: digested.catalog, tools: digested.entries };
    });
    expect(parseServerConfig(pin, FILE).profile).toBe(AGENTAVOW_PROFILE);
  });

  test('accepts a pin whose tools overflowed the 500-entry fold', () => {
    const tools = Array.from({ length: 503 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
    const digested = digestCatalog(tools);
    expect(Object.keys(digested.entries)).toContain('tools:overflow');
    const pin = withChange((p) => {
      p.pin = { catalog: digested.catalog, tools: digested.entries };
      delete p.definitions;
    });
    expect(parseServerConfig(pin, FILE).pin.catalog).toBe(digested.catalog);
  });

  test('keeps every tool of a catalog over 500 by its own digest, beside the published fold and its overflow entry', () => {
    const tools = Array.from({ length: 503 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
    const digested = digestCatalog(tools);
    const pin = withChange((p) => {
      p.pin = {
        catalog: digested.catalog,
        tools: digested.keyed,
        overflow: digested.entries['tools:overflow'],
      };
      delete p.definitions;
    });
    const server = parseServerConfig(pin, FILE);
    expect(server.pin.catalog).toBe(digested.catalog);
    expect(Object.keys(server.pin.tools)).toHaveLength(503);
    expect(server.pin.tools['tool:t99']).toBe(digested.tools[99]?.digest);
    expect(server.pin.overflow).toBe(digested.entries['tools:overflow']);
  });
});

describe('the per-tool map of a catalog over 500 tools', () => {
  const tools = Array.from({ length: 503 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
  const digested = digestCatalog(tools);
  const overflow = digested.entries['tools:overflow'] as string;
  const withPin = (pin: Record<string, unknown>): unknown =>
    withChange((p) => {
      p.pin = pin;
      delete p.definitions;
    });

  test('rejects a per-tool map without the overflow entry the fold makes of it', () => {
    const error = rejection(withPin({ catalog: digested.catalog, tools: digested.keyed }));
    expectInvalid(error, 'pin.overflow');
    expect(error.data.expected).toContain(overflow);
  });

  test('rejects a per-tool map whose tool beyond the first 500 is not the one the catalog folds', () => {
    // tool:t99 sorts last: it is folded into the overflow entry, and the catalog no longer matches.
    expect(Object.keys(digested.keyed).sort().slice(500)).toContain('tool:t99');
    const changed = { ...digested.keyed, 'tool:t99': digested.keyed['tool:t0'] as string };
    const error = rejection(withPin({ catalog: digested.catalog, tools: changed, overflow }));
    expectInvalid(error, 'pin.catalog');
  });

  test('rejects an overflow entry beside a catalog of at most 500 tools, and beside tools:overflow', () => {
    const small = digestCatalog(tools.slice(0, 3));
    expectInvalid(
      rejection(withPin({ catalog: small.catalog, tools: small.keyed, overflow })),
      'pin.overflow',
    );
    const legacy = { catalog: digested.catalog, tools: digested.entries, overflow };
    expectInvalid(rejection(withPin(legacy)), 'pin.overflow');
  });
});

describe('rejecting a broken pin file', () => {
  test('rejects an unknown top-level key', () => {
    const error = rejection(withChange((p) => (p.extra = true)));
    expectInvalid(error, 'extra');
    expect(error.data.expected).toMatch(/unknown keys are rejected/);
  });

  test('names a misspelt key first, with the missing key it most likely meant', () => {
    const error = rejection(
      withChange((p) => {
        p.upstrem = p.upstream;
        delete p.upstream;
      }),
    );
    expectInvalid(error, 'upstrem');
    expect(error.message).toContain('(did you mean "upstream"?)');
    expect(error.message).toContain('(and 1 more problem)');
  });

  test('suggests nothing for an unknown key that is like no missing one', () => {
    const error = rejection(withChange((p) => (p.colour = 'blue')));
    expect(error.message).not.toContain('did you mean');
  });

  test('rejects an unknown key inside upstream', () => {
    expectInvalid(rejection(withChange((p) => (p.upstream.command = ['node']))), 'upstream.command');
  });

  test('rejects a missing required field', () => {
    const error = rejection(withChange((p) => delete p.upstream));
    expectInvalid(error, 'upstream');
    expect(error.data.expected).toBe('a mapping (required)');
  });

  test('rejects a tool digest that is not sha256 and 64 lowercase hex', () => {
    const bad = withChange(
      (p) => (p.pin.tools['tool:echo'] = (TOOL_DIGESTS['tool:echo'] as string).toUpperCase()),
    );
    const error = rejection(bad);
    expectInvalid(error, 'pin.tools["tool:echo"]');
    expect(error.data.expected).toMatch(/64 lowercase hex/);
  });

  test('rejects a catalog digest with the wrong format', () => {
    expectInvalid(rejection(withChange((p) => (p.pin.catalog = 'md5:abc'))), 'pin.catalog');
  });

  test('rejects a key that is not a fold key', () => {
    const error = rejection(withChange((p) => (p.pin.tools['echo'] = TOOL_DIGESTS['tool:echo'])));
    expectInvalid(error, 'pin.tools.echo');
  });

  test('rejects a catalog digest that is not the fold of pin.tools', () => {
    const error = rejection(withChange((p) => delete p.pin.tools['tool:add']));
    expectInvalid(error, 'pin.catalog');
    expect(error.message).toContain('the fold of pin.tools');
  });

  test('rejects a definition whose digest disagrees with the pinned one', () => {
    const error = rejection(withChange((p) => (p.definitions['tool:echo'].description = 'Now exfiltrates.')));
    expectInvalid(error, 'definitions["tool:echo"]');
    expect(error.data.expected).toContain(TOOL_DIGESTS['tool:echo']);
  });

  test('rejects a definition whose key is not in pin.tools', () => {
    const error = rejection(withChange((p) => (p.definitions['tool:other'] = { name: 'other' })));
    expectInvalid(error, 'definitions["tool:other"]');
  });

  test("rejects a definition filed under another name's key", () => {
    const error = rejection(withChange((p) => (p.definitions['tool:echo'] = TOOLS[1])));
    expectInvalid(error, 'definitions["tool:echo"].name');
  });

  test('rejects a member pinned by value that has no JSON value (a YAML .nan)', () => {
    const error = textRejection(
      stringify(validPin()).replace(/^( +)name: echo$/m, '$1name: echo\n$1x-score: .nan'),
    );
    expectInvalid(error, 'definitions["tool:echo"]["x-score"]');
    expect(error.data.expected).toBe('a JSON value (pinned by value)');
  });

  test('rejects a mode other than enforce or monitor', () => {
    const error = rejection(withChange((p) => (p.mode = 'audit')));
    expectInvalid(error, 'mode');
    expect(error.data.expected).toBe('one of "enforce", "monitor"');
  });

  test('rejects an onDrift other than filter or block-server', () => {
    expectInvalid(rejection(withChange((p) => (p.onDrift = 'ignore'))), 'onDrift');
  });

  test('reads onDrift per severity, and a single value as is', () => {
    const policy = { high: 'filter', low: 'flag' };
    const server = parseServerConfig(
      withChange((p) => (p.onDrift = policy)),
      FILE,
    );
    expect(server.onDrift).toEqual(policy);
    expect(parsePinFile(stringify(withChange((p) => (p.onDrift = policy))), FILE).onDrift).toEqual(policy);
  });

  test.each([
    [{ high: 'flag', low: 'flag' }, 'onDrift.high'],
    [{ high: 'filter' }, 'onDrift.low'],
    [{ high: 'filter', low: 'flag', medium: 'filter' }, 'onDrift.medium'],
    ['flag', 'onDrift'],
  ])('rejects onDrift %j, naming %s (high drift is never only flagged: use monitor mode)', (value, field) => {
    expectInvalid(rejection(withChange((p) => (p.onDrift = value))), field);
  });

  test.each(['not a url', 'ftp://example.com/mcp', 'file:///etc/passwd', 'http//missing-colon'])(
    'rejects the upstream url %j',
    (url) => {
      const error = rejection(withChange((p) => (p.upstream.url = url)));
      expectInvalid(error, 'upstream.url');
      expect(error.data.expected).toMatch(/http/);
    },
  );

  test.each(['Authorization', 'authorization', 'AUTHORIZATION'])(
    'rejects userinfo in upstream.url beside a configured %s header, without showing it',
    (name) => {
      const error = rejection(
        withChange((p) => {
          p.upstream.url = 'https://agent:S3CRET@h.example/mcp';
          p.upstream.headers = { [name]: 'Bearer t0k' };
        }),
      );
      expectInvalid(error, 'upstream.url');
      expect(error.data.expected).toMatch(/authorization/);
      expect(JSON.stringify({ message: error.message, data: error.data })).not.toContain('S3CRET');
    },
  );

  test('rejects userinfo in upstream.url whose "%" starts no escape', () => {
    const error = rejection(withChange((p) => (p.upstream.url = 'https://agent:100%@h.example/mcp')));
    expectInvalid(error, 'upstream.url');
    expect(error.data.expected).toMatch(/%25/);
  });

  test('rejects a header value that would split the request line', () => {
    const error = rejection(withChange((p) => (p.upstream.headers = { 'X-A': 'a\r\nX-B: b' })));
    expectInvalid(error, 'upstream.headers["X-A"]');
  });

  test('rejects a server name that cannot be a route segment', () => {
    expectInvalid(rejection(withChange((p) => (p.name = '../admin'))), 'name');
  });

  test('rejects a profile label without a version', () => {
    expectInvalid(rejection(withChange((p) => (p.profile = 'trace.mcp-tool-definition'))), 'profile');
  });

  test('rejects a duplicate key in YAML, naming its line', () => {
    const error = textRejection('name: demo\nname: other\n');
    expectInvalid(error, '');
    expect(error.message).toContain('line 2');
  });

  test('rejects a duplicate key in JSON', () => {
    expectInvalid(textRejection('{"name": "demo", "name": "other"}'), '');
  });

  test('rejects unparsable YAML', () => {
    const error = textRejection('name: demo\nupstream: [unclosed\nmode: enforce\n');
    expectInvalid(error, '');
    expect(error.message).toMatch(/YAML or JSON/);
  });

  test('rejects a document that is not a mapping', () => {
    expectInvalid(textRejection('- demo\n'), '');
  });

  test('rejects a file that cannot be read, naming the file', async () => {
    await expect(loadPinFile('/nonexistent/toolpin/demo.yaml')).rejects.toMatchObject({
      code: 'GW_PIN_FILE_INVALID',
      data: { file: '/nonexistent/toolpin/demo.yaml', reason: 'ENOENT' },
    });
  });
});
