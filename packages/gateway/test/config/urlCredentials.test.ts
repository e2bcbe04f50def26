import { moveUrlCredentials } from '../../src/config/urlCredentials.js';

function basic(octets: Buffer | string): string {
  return `Basic ${Buffer.from(octets).toString('base64')}`;
}

describe('moveUrlCredentials', () => {
  it('leaves a URL without userinfo and its headers as they are', () => {
    const headers = { 'X-Api-Key': 'k' };
    expect(moveUrlCredentials('https://h.example/mcp?token=t', headers)).toEqual({
      url: 'https://h.example/mcp?token=t',
      headers,
      moved: false,
    });
  });

  it.each([
    ['a user and a password', 'http://agent:pw@h.example/mcp', 'agent:pw'],
    ['a user alone (empty password)', 'http://TOKEN123@h.example/mcp', 'TOKEN123:'],
    ['a password alone (empty user)', 'http://:pw@h.example/mcp', ':pw'],
    ['a quote kept as written', "http://agent:Pa'ss@h.example/mcp", "agent:Pa'ss"],
    ['a space, "@" and ":" escaped', 'http://agent:a%20b%40c%3Ad@h.example/mcp', 'agent:a b@c:d'],
    ['a space and quotes the URL parser escapes', 'http://agent:a b"c@h.example/mcp', 'agent:a b"c'],
    ['UTF-8 written as is and escaped', 'http://ag%C3%A9nt:pässwörd@h.example/mcp', 'agént:pässwörd'],
  ])('sends %s as Basic base64(user:password), percent-decoded', (_label, url, userPass) => {
    const moved = moveUrlCredentials(url, {});
    expect(moved).toEqual({
      url: 'http://h.example/mcp',
      headers: { authorization: basic(userPass) },
      moved: true,
    });
  });

  it('sends escaped octets that are not UTF-8 as they are', () => {
    expect(moveUrlCredentials('https://u:%FF%00x@h.example/', { 'X-A': 'a' })).toEqual({
      url: 'https://h.example/',
      headers: { 'X-A': 'a', authorization: basic(Buffer.from([0x75, 0x3a, 0xff, 0x00, 0x78])) },
      moved: true,
    });
  });

  it.each([
    ['an authorization header configured too', 'https://u:p@h.example/', { Authorization: 'Bearer t' }],
    ['a "%" that starts no escape', 'https://u:100%@h.example/', {}],
    ['a user name that decodes to ":"', 'https://a%3Ab:p@h.example/', {}],
    ['text that is not a URL', 'not a url', {}],
  ])('refuses %s, without showing the password', (_label, url, headers) => {
    const moved = moveUrlCredentials(url, headers);
    expect(moved).toEqual({ problem: expect.any(String) });
    expect(JSON.stringify(moved)).not.toMatch(/100%|:p@/);
  });
});
