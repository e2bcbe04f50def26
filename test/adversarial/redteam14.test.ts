import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initializeRequest } from '../support/rawMcp.js';
import { until } from '../support/until.js';
import {
  RAW_ECHO,
  rawFixtureCommand,
  runWrapInProcess,
  stdioPinFor,
  writePin,
  type WrapProgram,
} from '../transports/support.js';

type Line = Record<string, unknown> | Record<string, unknown>[];

/** `toolpin wrap` in-process before the raw fixture, driven by exact bytes on its stdin. */
interface RawWrap {
  readonly wrap: WrapProgram;
  /** Every line wrap wrote on stdout so far, parsed. */
  lines(): Line[];
  /** The answers (objects, or members of a batch answer) under `id`. */
  answersTo(id: unknown): Record<string, unknown>[];
  /** The tool names the fixture ran (its own log). */
  calls(): Promise<string[]>;
  write(bytes: string | Buffer): void;
  close(): Promise<void>;
}

async function startRawWrap(): Promise<RawWrap> {
  const dir = await mkdtemp(join(tmpdir(), 'toolpin-rt14-'));
  const callLog = join(dir, 'calls.log');
  const pin = stdioPinFor('raw', rawFixtureCommand(), [RAW_ECHO], { TOOLPIN_RAW_CALL_LOG: callLog });
  const wrap = runWrapInProcess(await writePin(dir, pin), undefined);
  let received = '';
  wrap.stdout.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  const lines = (): Line[] =>
    received
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Line);
  const raw: RawWrap = {
    wrap,
    lines,
    answersTo: (id) =>
      lines()
        .flatMap((line) => (Array.isArray(line) ? line : [line]))
        .filter((m) => m.id === id),
    calls: async () => (await readFile(callLog, 'utf8').catch(() => '')).split('\n').filter((l) => l !== ''),
    write: (bytes) => void wrap.stdin.write(bytes),
    close: async () => {
      await wrap.end();
      await rm(dir, { recursive: true, force: true });
    },
  };
  raw.write(`${JSON.stringify(initializeRequest(0))}\n`);
  await until(() => (raw.answersTo(0).length > 0 ? true : undefined), 'the initialize answer');
  raw.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return raw;
}

const call = (id: unknown, text: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text } } });

// --- Finding A: wrap's stdin was read by the SDK's StdioServerTransport, whose schemas dropped every
// line they refused with no answer: not JSON, a UTF-8 BOM, a batch, an id past 2^53 or null, params
// an array, a member beside JSON-RPC's, a progress token that is an object. The client's request
// then waited forever (nothing was in flight, so no timeout answered it either), and a line over
// 10 MiB closed the client side (the session ended, its requests unanswered). wrap now reads its
// stdin with the gateway's own parser (`ingress/stdioFrontTransport.ts`, the HTTP fronts' rules):
// every line gets its answer, and the session goes on.

describe('redteam14 finding A: a line on wrap’s stdin the SDK’s schema refused was never answered', () => {
  let raw: RawWrap;
  beforeAll(async () => {
    raw = await startRawWrap();
  });
  afterAll(async () => raw.close());

  it('answers each refused line once (-32700 / -32600) and runs nothing of it', async () => {
    raw.write('this is not json\n');
    raw.write(`\ufeff${call(1, 'bom')}\n`);
    raw.write(`[${call(2, 'batched')},{"jsonrpc":"2.0","method":"notifications/progress"}]\n`);
    raw.write(`${call(4, 'big id').replace('"id":4,', '"id":9007199254740993,')}\n`);
    raw.write(`${call(null, 'null id')}\n`);
    raw.write('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":["echo",{"text":"positional"}]}\n');
    raw.write(`${call(99, 'sentinel')}\n`);
    await until(() => (raw.answersTo(99).length > 0 ? true : undefined), 'the sentinel call');
    const nulls = raw.answersTo(null);
    // Not JSON and the BOM line: -32700; the big and the null id: -32600 (no id to answer under).
    expect(nulls.map((m) => (m.error as { code: number }).code).sort()).toEqual(
      [-32700, -32700, -32600, -32600].sort(),
    );
    // The batch: one answer per request it held, as a batch (an array), nothing forwarded.
    const batch = raw.lines().find(Array.isArray);
    expect(batch).toEqual([
      expect.objectContaining({ id: 2, error: expect.objectContaining({ code: -32600 }) }),
    ]);
    // Positional params for a screened method: no tool name, refused before the child.
    expect(raw.answersTo(3)).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: -32602 }) }),
    ]);
    expect(raw.answersTo(99)).toEqual([expect.objectContaining({ result: expect.anything() })]);
    // The fixture ran only the sentinel.
    expect(await raw.calls()).toEqual(['echo']);
    expect(raw.wrap.events('client.invalid_message')).toHaveLength(5);
  });

  it('serves what the SDK refused but JSON-RPC allows', async () => {
    // A member beside JSON-RPC's (the SDK's schema is strict), an object progress token, CRLF.
    raw.write(`${call(10, 'extra').slice(0, -1)},"decoy":{"x":1}}\r\n`);
    raw.write(
      '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t"},"_meta":{"progressToken":{"a":1}}}}\n',
    );
    // One line in one-byte writes, and U+2028 inside a string.
    for (const byte of Buffer.from(`${call(12, 'a\u2028b')}\n`)) raw.write(Buffer.from([byte]));
    await until(() => (raw.answersTo(12).length > 0 ? true : undefined), 'the split call');
    for (const id of [10, 11])
      await until(() => (raw.answersTo(id).length > 0 ? true : undefined), `call ${id}`);
    expect(raw.answersTo(10)[0]?.result).toEqual({ content: [{ type: 'text', text: 'extra' }] });
    expect(raw.answersTo(11)[0]?.result).toEqual({ content: [{ type: 'text', text: 't' }] });
    expect(raw.answersTo(12)[0]?.result).toEqual({ content: [{ type: 'text', text: 'a\u2028b' }] });
  });

  it('answers a line over the bound and goes on (the SDK closed the session)', async () => {
    const huge = `${call(20, 'x'.repeat(10 * 1024 * 1024))}\n`;
    raw.write(huge);
    raw.write(`${call(21, 'after')}\n`);
    await until(() => (raw.answersTo(21).length > 0 ? true : undefined), 'the call after the huge line');
    expect(raw.answersTo(21)[0]?.result).toEqual({ content: [{ type: 'text', text: 'after' }] });
    expect(raw.answersTo(null).at(-1)?.error).toMatchObject({ code: -32600 });
    expect(raw.answersTo(20)).toEqual([]);
  });
});
