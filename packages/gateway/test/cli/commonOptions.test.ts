import { CliInputError } from '../../src/cli/cliInputError.js';
import { parseCapabilities, parseHeaderOptions, parseTimeout } from '../../src/cli/commonOptions.js';

describe('CLI option parsing', () => {
  it('reads --header "Name: value" options, keeping colons in the value', () => {
    expect(parseHeaderOptions(['Authorization: Bearer a:b', 'X-Team:  ops '])).toEqual({
      Authorization: 'Bearer a:b',
      'X-Team': 'ops',
    });
  });

  it('refuses a header without a name, or one that would split the request', () => {
    expect(() => parseHeaderOptions(['no colon'])).toThrow(CliInputError);
    expect(() => parseHeaderOptions(['Bad Name: x'])).toThrow(CliInputError);
    expect(() => parseHeaderOptions(['X-A: b\r\nX-Injected: c'])).toThrow(CliInputError);
  });

  it('reads --capabilities as a JSON object only', () => {
    expect(parseCapabilities('{"sampling":{}}')).toEqual({ sampling: {} });
    expect(parseCapabilities(undefined)).toBeUndefined();
    expect(() => parseCapabilities('[1]')).toThrow('--capabilities: expected a JSON object');
    expect(() => parseCapabilities('{')).toThrow('--capabilities: not JSON');
  });

  it('reads --timeout as a positive integer of milliseconds', () => {
    expect(parseTimeout('1500', 30_000)).toBe(1500);
    expect(parseTimeout(undefined, 30_000)).toBe(30_000);
    expect(() => parseTimeout('0', 30_000)).toThrow(CliInputError);
    expect(() => parseTimeout('soon', 30_000)).toThrow(CliInputError);
  });
});
