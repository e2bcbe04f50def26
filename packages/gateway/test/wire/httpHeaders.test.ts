import { copyEndToEnd, hopByHopNames } from '../../src/wire/httpHeaders.js';

describe('hop-by-hop headers (RFC 9110 §7.6.1)', () => {
  it('adds every header the Connection header names to the fixed set', () => {
    const names = hopByHopNames({ connection: 'X-Foo, keep-alive,  x-bar ,' });
    expect(names.has('x-foo')).toBe(true);
    expect(names.has('x-bar')).toBe(true);
    expect(names.has('te')).toBe(true);
    expect(names.has('')).toBe(false);
  });

  it('drops the named headers and the fixed ones, and keeps end-to-end headers', () => {
    const headers: Record<string, string> = {
      connection: 'x-foo',
      'x-foo': '1',
      te: 'trailers',
      authorization: 'Bearer t',
      'x-custom': 'kept',
    };
    expect(copyEndToEnd(headers)).toEqual({ authorization: 'Bearer t', 'x-custom': 'kept' });
  });
});

describe('copying end-to-end headers', () => {
  it('leaves out the fixed hop-by-hop headers, the ones Connection names, and the omitted one', () => {
    const headers = {
      connection: 'x-foo',
      'x-foo': '1',
      'keep-alive': 'timeout=5',
      'content-length': '9',
      'mcp-session-id': 's',
    };
    expect(copyEndToEnd(headers, 'content-length')).toEqual({ 'mcp-session-id': 's' });
    expect(headers['x-foo']).toBe('1');
  });

  it('answers the usual Connection: keep-alive with the fixed set', () => {
    expect(copyEndToEnd({ connection: 'Keep-Alive', accept: 'application/json' })).toEqual({
      accept: 'application/json',
    });
    expect(
      copyEndToEnd(
        { connection: 'keep-alive', 'content-length': '2', 'content-type': 'application/json' },
        'content-length',
      ),
    ).toEqual({
      'content-type': 'application/json',
    });
  });
});
