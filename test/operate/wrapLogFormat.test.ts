import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../packages/gateway/dist/cli/program.js';
import { captureIo } from '../../packages/gateway/test/cli/capturedIo.js';
import { catalogAtStart, fixtureCommand, stdioPinFor, writePin } from '../transports/support.js';
import { until } from '../support/until.js';

const HANDSHAKE = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'desktop', version: '1' },
    },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
];

/** `toolpin wrap` in-process: one session (initialize, tools/list), then the client ends it. */
async function wrapSession(pinFile: string, format: string[]): Promise<{ stdout: string; stderr: string }> {
  const stdin = new PassThrough();
  const io = captureIo(stdin);
  const code = runCli(['wrap', '--pin', pinFile, ...format], io);
  for (const message of HANDSHAKE) stdin.write(`${JSON.stringify(message)}\n`);
  await until(() => (io.written.stdout.includes('"id":2') ? true : undefined), 'the tools/list answer');
  stdin.end();
  expect(await code).toBe(0);
  return io.written;
}

describe('toolpin wrap --log-format', () => {
  let dir: string;
  let pinFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-wrap-log-'));
    pinFile = await writePin(
      dir,
      stdioPinFor('fixture', fixtureCommand(), await catalogAtStart(fixtureCommand())),
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('pretty: readable lines on stderr, and stdout carries MCP only', async () => {
    const { stdout, stderr } = await wrapSession(pinFile, ['--log-format', 'pretty']);
    for (const line of stdout.trimEnd().split('\n'))
      expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(stderr).toMatch(/^\[[\d:.]+\] INFO: toolpin wrap: session ended$/m);
    expect(stderr).toMatch(/^ {4}endedBy: "client"$/m);
    expect(stderr.split('\n').some((line) => line.startsWith('{'))).toBe(false);
  }, 30_000);

  it('json by default when stderr is not a terminal: one JSON line per event on stderr', async () => {
    const { stderr } = await wrapSession(pinFile, []);
    const lines = stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual(expect.arrayContaining([expect.objectContaining({ event: 'wrap.stopped' })]));
  }, 30_000);

  it('refuses another format before starting anything: exit 2, one line', async () => {
    const io = captureIo();
    expect(await runCli(['wrap', '--pin', pinFile, '--log-format', 'xml'], io)).toBe(2);
    expect(io.written.stderr).toBe('toolpin wrap: --log-format xml: expected json or pretty\n');
    expect(io.written.stdout).toBe('');
  });
});
