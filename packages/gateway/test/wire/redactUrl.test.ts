import {
  isSecretParam,
  redactUrl,
  redactUrlsInText,
  redactUserinfoInText,
} from '../../src/wire/redactUrl.js';

describe('redactUrl', () => {
  it.each([
    [
      'http://user:s3cret@127.0.0.1:8080/mcp?api_key=K3y&x=1',
      'http://[redacted]@127.0.0.1:8080/mcp?api_key=[redacted]&x=1',
    ],
    ['https://TOKEN123@github.example/mcp', 'https://[redacted]@github.example/mcp'],
    ['https://:pw@h.example/', 'https://[redacted]@h.example/'],
    ['https://h.example/mcp', 'https://h.example/mcp'],
    ['https://h.example/mcp?page=2&x=1', 'https://h.example/mcp?page=2&x=1'],
    [
      'https://h.example/?KEY=a&Token=b&APIKEY=c&access_token=d&secret=e&password=f&auth=g&sig=h',
      'https://h.example/?KEY=[redacted]&Token=[redacted]&APIKEY=[redacted]&access_token=[redacted]&secret=[redacted]&password=[redacted]&auth=[redacted]&sig=[redacted]',
    ],
    [
      'https://s3.example/o?X-Amz-Credential=a&X-Amz-Signature=b&X-Amz-Security-Token=c&X-Amz-Expires=60',
      'https://s3.example/o?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Security-Token=[redacted]&X-Amz-Expires=60',
    ],
    ['https://h.example/sse?sessionId=abc', 'https://h.example/sse?sessionId=[redacted]'],
    ['https://h.example/?api%5Fkey=a&flag', 'https://h.example/?api%5Fkey=[redacted]&flag'],
    ['https://h.example/#access_token=a&state=x', 'https://h.example/#access_token=[redacted]&state=x'],
    ['https://h.example/#opaque-fragment', 'https://h.example/#[redacted]'],
    ['http://[::1]:9/mcp?token=t', 'http://[::1]:9/mcp?token=[redacted]'],
    ['not a url', '[redacted] (not a URL)'],
    ['mailto:someone@example.com', 'mailto:[redacted]'],
  ])('%s', (input, expected) => {
    expect(redactUrl(input)).toBe(expected);
  });

  it('returns a URL with nothing to redact as written', () => {
    for (const url of ['http://127.0.0.1:8081', 'HTTP://Example.COM:80/a/../b?x=1'])
      expect(redactUrl(url)).toBe(url);
  });

  it('tells credential parameter names from others, case-insensitively', () => {
    for (const name of [
      'key',
      'api_key',
      'apiKey',
      'API-KEY',
      'x-api-key',
      'token',
      'refresh_token',
      'client_secret',
      'passwd',
      'Authorization',
      'signature',
      'code',
      'jwt',
    ])
      expect([name, isSecretParam(name)]).toEqual([name, true]);
    for (const name of ['x', 'page', 'limit', 'version', 'transport', 'q'])
      expect([name, isSecretParam(name)]).toEqual([name, false]);
  });
});

describe('redactUrlsInText', () => {
  it('redacts every URL in a message and leaves the punctuation around it', () => {
    expect(
      redactUrlsInText(
        'cannot connect to http://u:pw@127.0.0.1:9/mcp?api_key=K3y: refused; retry (https://h.example/?token=T).',
      ),
    ).toBe(
      'cannot connect to http://[redacted]@127.0.0.1:9/mcp?api_key=[redacted]: refused; retry (https://h.example/?token=[redacted]).',
    );
  });

  it('keeps text without URLs, and file URLs of stack traces, as they are', () => {
    const stack = 'Error: boom\n    at file:///srv/app/main.js:6:11\n    at run (node:internal/x:1:1)';
    expect(redactUrlsInText(stack)).toBe(stack);
    expect(redactUrlsInText('no url: here')).toBe('no url: here');
  });

  it('redacts the userinfo of a URL that does not parse', () => {
    expect(redactUrlsInText('at http://u:pw@[bad/x')).toBe('at http://[redacted]@[bad/x');
  });

  it.each([
    ['an apostrophe (left as written by the URL parser)', "http://agent:Pa'ss@127.0.0.1:1/mcp"],
    ['double quotes', 'http://agent:"Pa"ss"@127.0.0.1:1/mcp'],
    ['a backtick and angle brackets', 'http://agent:P`a<s>s@127.0.0.1:1/mcp'],
    ['spaces', 'http://agent:Pa ss word@127.0.0.1:1/mcp'],
    ['%-escapes', 'http://agent:Pa%27ss%20%40x@127.0.0.1:1/mcp'],
    ['a bad %-escape', 'http://agent:Pa%zzss@127.0.0.1:1/mcp'],
    ['"@" written as is', 'http://agent:Pa@ss@w@127.0.0.1:1/mcp'],
    ['no path after the host', "https://agent:Pa'ss@h.example"],
  ])('redacts a password holding %s, whether or not the URL parses', (_label, url) => {
    const text = `tools/list to the upstream failed: cannot connect to ${url}: refused`;
    const redacted = redactUrlsInText(text);
    expect(redacted).not.toMatch(/Pa|ss|agent/);
    expect(redacted).toMatch(
      /^tools\/list to the upstream failed: cannot connect to https?:\/\/\[redacted\]@/,
    );
  });

  it('redacts the userinfo of every URL in one text, and only the userinfo', () => {
    expect(
      redactUserinfoInText(
        "a http://u1:p'1@h1.example/x b https://u2:p 2@h2.example?q=1 c ws://h3.example/ d sse://u4@h4.example#f",
      ),
    ).toBe(
      'a http://[redacted]@h1.example/x b https://[redacted]@h2.example?q=1 c ws://h3.example/ d sse://[redacted]@h4.example#f',
    );
    expect(redactUserinfoInText('http://u:p@h1/a://v:q@h2/')).toBe('http://[redacted]@h1/a://[redacted]@h2/');
  });

  it('leaves an "@" after the authority (a path, a query) as it is', () => {
    const text = 'GET http://h.example/users/@me?by=a@b.example and file:///srv/@scope/pkg/index.js';
    expect(redactUserinfoInText(text)).toBe(text);
    expect(redactUrlsInText(text)).toBe(text);
  });

  it('still redacts credential parameters of a URL whose userinfo held a quote', () => {
    expect(redactUrlsInText("see http://u:p'w@h.example/mcp?api_key=K3y&x=1 now")).toBe(
      'see http://[redacted]@h.example/mcp?api_key=[redacted]&x=1 now',
    );
  });
});
