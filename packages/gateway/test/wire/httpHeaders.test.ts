import { hopByHopNames, stripHopByHop } from '../../src/wire/httpHeaders.js';

describe('hop-by-hop headers (RFC 9110 §7.6.1)', () => {
  it('adds every header the Connection header names to the fixed set', () => {
    const names = hopByHopNames({ connection: 'X-Foo, keep-alive,  x-bar ,' });
    expect(names.has('x-foo')).toBe(true);
    expect(names.has('x-bar')).toBe(true);
    expect(names.has('te')).toBe(true);
    expect(names.has('')).toBe(false);
  });

  it('strips the named headers and the fixed ones, and keeps end-to-end headers', () => {
    const headers: Record<string, string> = {
      connection: 'x-foo',
      'x-foo': '1',
      te: 'trailers',
      authorization: 'Bearer t',
      'x-custom': 'kept',
    };
    stripHopByHop(headers);
    expect(headers).toEqual({ authorization: 'Bearer t', 'x-custom': 'kept' });
  });
});
