import { showJson, showText, showWordDiff } from '../../src/review/html.js';

describe('review page escaping', () => {
  it('escapes markup and shows invisible and bidi characters of server text', () => {
    expect(showText(`<img src=x onerror="a('b')">&`)).toBe(
      '&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;',
    );
    expect(showText('safe\u202Etxt.exe\u200B')).toBe('safe\\u{202e}txt.exe\\u{200b}');
  });

  it('marks up a word diff only after escaping, so a marker in server text cannot open markup', () => {
    expect(showWordDiff('a [-old-] [+new <b>+]')).toBe('a <del>old</del> <ins>new &lt;b&gt;</ins>');
    expect(showWordDiff('[+</ins><script>x</script>+]')).toBe(
      '<ins>&lt;/ins&gt;&lt;script&gt;x&lt;/script&gt;</ins>',
    );
  });

  it('shows JSON indented and escaped, and an absent value as such', () => {
    expect(showJson({ d: '<x>' })).toBe('{\n  &quot;d&quot;: &quot;&lt;x&gt;&quot;\n}');
    expect(showJson(undefined)).toBe('<em>absent</em>');
  });
});
