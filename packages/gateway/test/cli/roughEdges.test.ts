import { runCli } from './runCli.js';

// Bad flags end in one line naming the flag and exit 2, before anything is listed or started.
describe('CLI flags checked before anything runs', () => {
  it.each([
    [['pin', '--url', 'not-a-url', '--name', 'x'], 'toolpin pin: --url '],
    [['pin', '--url', 'ftp://u:secret@host/mcp', '--name', 'x'], 'expected an http:// or https:// URL'],
    [['pin', '--from-file', 'catalog.json', '--upstream', 'nope', '--name', 'x'], 'toolpin pin: --upstream '],
    [['serve', '--port', 'abc'], 'toolpin serve: --port abc: expected a port number from 0 to 65535'],
    [['serve', '--port', '8080', '--admin-port', '70000'], '--admin-port 70000: expected a port number'],
  ])('toolpin %j exits 2 with one line naming the flag', async (args, expected) => {
    const run = await runCli(...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(expected);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toContain('secret');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).toBe('');
  });
});
