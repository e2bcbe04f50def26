import { uriMatchesTemplate } from '../../src/policy/templateMatch.js';

describe('uriMatchesTemplate: a resources/read URI against a resource template, as the SDK routes it', () => {
  it.each([
    ['note:///{id}', 'note:///1', true],
    ['note:///{id}', 'note:///1/2', false],
    ['note:///{id}', 'other:///1', false],
    ['file:///{+path}', 'file:///a/b/c.txt', true],
    ['search{?q,lang}', 'search?q=x&lang=en', true],
    ['users/{id}/posts', 'users/7/posts', true],
    ['users/{id}/posts', 'users/7/comments', false],
  ])('%s against %s: %s', (template, uri, expected) => {
    expect(uriMatchesTemplate(template, uri)).toBe(expected);
  });

  it('agrees with the SDK: what UriTemplate.match routes to the template is a match here', async () => {
    const { UriTemplate } = await import('@modelcontextprotocol/sdk/shared/uriTemplate.js');
    const cases: [string, string][] = [
      ['a{/x*}', 'a/1/2'],
      ['mail://{user}@{host}', 'mail://me@example.com'],
      ['x{.ext}', 'x.json'],
      ['x{#frag}', 'x#top'],
    ];
    for (const [template, uri] of cases)
      expect(uriMatchesTemplate(template, uri)).toBe(new UriTemplate(template).match(uri) !== null);
  });

  it('decides an upstream template of many {+x} parts against a long URI without backtracking', () => {
    // A backtracking engine tries every split of the URI among the parts: polynomial in its length.
    const template = `h://${Array.from({ length: 12 }, (_, at) => `{+p${at}}`).join('-')}!`;
    const uri = `h://${'a-'.repeat(5000)}`;
    expect(uriMatchesTemplate(template, uri)).toBe(false);
    expect(uriMatchesTemplate(template, `${uri}a!`)).toBe(true);
  });

  it('takes a template it cannot read as matching (fail closed)', () => {
    expect(uriMatchesTemplate('note:///{id', 'note:///1')).toBe(true);
  });
});
