import {
  checkParamHeaders,
  decodeParamValue,
  encodeParamValue,
  paramDeclarations,
} from '../../src/wire/paramHeaders.js';
import { parseJsonRpcBody, type JsonRpcBody } from '../../src/wire/jsonRpc.js';

function body(value: unknown): JsonRpcBody {
  const parsed = parseJsonRpcBody(JSON.stringify(value));
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.body;
}

const SCHEMA = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    count: { type: 'integer', 'x-mcp-header': 'Count' },
    on: { type: 'boolean', 'x-mcp-header': 'On' },
    nested: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
    list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } },
  },
};

const callOf = (args: unknown) =>
  body({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: args } });

describe('paramDeclarations: the x-mcp-header designations of an inputSchema', () => {
  it('collects the annotations reached through properties, nested ones too, not those under items', () => {
    expect(paramDeclarations(SCHEMA)).toEqual([
      { name: 'Region', path: ['region'], type: 'string' },
      { name: 'Count', path: ['count'], type: 'integer' },
      { name: 'On', path: ['on'], type: 'boolean' },
      { name: 'Zone', path: ['nested', 'zone'], type: 'string' },
    ]);
    expect(paramDeclarations({ type: 'object' })).toEqual([]);
    expect(paramDeclarations(undefined)).toEqual([]);
  });

  it('is undefined for a set the spec makes invalid', () => {
    const one = (property: Record<string, unknown>) => ({ type: 'object', properties: { a: property } });
    expect(paramDeclarations(one({ type: 'number', 'x-mcp-header': 'A' }))).toBeUndefined();
    expect(paramDeclarations(one({ type: 'object', 'x-mcp-header': 'A' }))).toBeUndefined();
    expect(paramDeclarations(one({ type: 'string', 'x-mcp-header': 'A B' }))).toBeUndefined();
    expect(paramDeclarations(one({ type: 'string', 'x-mcp-header': '' }))).toBeUndefined();
    expect(paramDeclarations({ type: 'object', 'x-mcp-header': 'Root' })).toBeUndefined();
    const twice = {
      type: 'object',
      properties: {
        a: { type: 'string', 'x-mcp-header': 'Dup' },
        b: { type: 'string', 'x-mcp-header': 'dup' },
      },
    };
    expect(paramDeclarations(twice)).toBeUndefined();
  });
});

describe('encodeParamValue / decodeParamValue: the SEP-2243 value encoding', () => {
  it('sends visible ASCII as is and anything else in the Base64 sentinel, and reads both back', () => {
    for (const [text, plain] of [
      ['us-west1', true],
      ['us west 1', true],
      [' padded', false],
      ['tab\tinside', false],
      ['Hello, 世界', false],
      ['line1\nline2', false],
      ['', false],
      ['=?base64?abcd?=', false],
      // A leading BOM is the value's (a decoder that strips it reads another value than the body's).
      ['\ufeffus-west1', false],
    ] as const) {
      const encoded = encodeParamValue(text);
      expect([text, encoded === text]).toEqual([text, plain]);
      expect(decodeParamValue(encoded)).toBe(text);
    }
  });

  it('refuses a sentinel that is not canonical Base64 of UTF-8; a value without both ends is a literal', () => {
    expect(decodeParamValue('=?base64?SGVsbG8?=')).toBeUndefined();
    expect(decodeParamValue('=?base64?SGVs!!!bG8=?=')).toBeUndefined();
    expect(decodeParamValue('=?base64?/w==?=')).toBeUndefined();
    expect(decodeParamValue('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=');
    expect(decodeParamValue('SGVsbG8=?=')).toBe('SGVsbG8=?=');
  });
});

describe('checkParamHeaders', () => {
  const check = (args: unknown, headers: Record<string, string>, required = true) =>
    checkParamHeaders(headers, callOf(args), () => SCHEMA, required);

  it('returns the headers to forward, written from the arguments', () => {
    expect(
      check(
        { region: 'eu', count: 7, on: false, nested: { zone: 'z 1' } },
        {
          'mcp-param-region': 'eu',
          'mcp-param-count': '7.0',
          'mcp-param-on': 'false',
          'mcp-param-zone': 'z 1',
          'mcp-param-other': 'x',
        },
      ),
    ).toEqual({
      ok: true,
      headers: {
        'Mcp-Param-Region': 'eu',
        'Mcp-Param-Count': '7',
        'Mcp-Param-On': 'false',
        'Mcp-Param-Zone': 'z 1',
      },
    });
  });

  it('refuses a missing header only when required (a 2026-07-28 request); null or absent arguments need none', () => {
    expect(check({ region: 'eu' }, {})).toMatchObject({
      ok: false,
      problem: expect.stringContaining('missing'),
    });
    expect(check({ region: 'eu' }, {}, false)).toEqual({ ok: true, headers: {} });
    expect(check({ region: null, on: null }, { 'mcp-param-on': 'true' })).toEqual({ ok: true, headers: {} });
    // An argument with no header text (an object, an unsafe integer) has no header to check.
    expect(check({ region: { a: 1 }, count: 2 ** 60 }, {})).toEqual({ ok: true, headers: {} });
  });

  it('refuses a disagreeing or undecodable header, naming the header, never the value', () => {
    const wrong = check({ region: 'eu' }, { 'mcp-param-region': 'SECRET' });
    expect(wrong).toEqual({
      ok: false,
      problem: 'Mcp-Param-Region header does not match the argument it mirrors',
    });
    expect(check({ count: 7 }, { 'mcp-param-count': '7.5' })).toMatchObject({ ok: false });
    expect(check({ on: true }, { 'mcp-param-on': 'True' })).toMatchObject({ ok: false });
    expect(check({ region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' })).toEqual({
      ok: false,
      problem: 'Mcp-Param-Region header is not a valid value',
    });
  });

  it('checks nothing (forwards nothing) outside a single tools/call with a designation', () => {
    const headers = { 'mcp-param-region': 'eu' };
    const list = body({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(checkParamHeaders(headers, list, () => SCHEMA, true)).toEqual({ ok: true, headers: {} });
    const batch = body([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: {} } },
    ]);
    expect(checkParamHeaders(headers, batch, () => SCHEMA, true)).toEqual({ ok: true, headers: {} });
    expect(checkParamHeaders(headers, callOf({ region: 'eu' }), () => undefined, true)).toEqual({
      ok: true,
      headers: {},
    });
  });
});
