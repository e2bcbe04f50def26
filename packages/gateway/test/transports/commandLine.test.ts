import { splitCommandLine } from '../../src/transports/commandLine.js';

describe('splitCommandLine', () => {
  test.each([
    [
      'npx -y @modelcontextprotocol/server-everything stdio',
      ['npx', '-y', '@modelcontextprotocol/server-everything', 'stdio'],
    ],
    ['  node   server.js  ', ['node', 'server.js']],
    [`node "my server.js" --name 'a b'`, ['node', 'my server.js', '--name', 'a b']],
    [`echo "say \\"hi\\"" 'it''s' a\\ b`, ['echo', 'say "hi"', 'its', 'a b']],
    [`run '' ""`, ['run', '', '']],
    ['$HOME/bin/x *.js', ['$HOME/bin/x', '*.js']],
  ])('splits %j', (text, argv) => {
    expect(splitCommandLine(text)).toEqual(argv);
  });

  test('rejects an unterminated quote', () => {
    expect(() => splitCommandLine(`node 'server.js`)).toThrow(/unterminated/);
  });
});
