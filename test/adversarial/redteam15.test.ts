// Red team 15: exact bytes on the change of red team 14: wrap's stdin read by the gateway's own
// parser (`StdioFrontTransport`, `LineFramer`), bridged upstream batches read message by message,
// and Mcp-Name decoded from its Base64 sentinel. Each describe is one finding: the attack first,
// then the gateway's answer. In-process wraps and gateways; the stdio server is the raw fixture.
// What was tried and found sound (no describe here): LineFramer with a newline as a chunk's first or
// last byte, a line of exactly the bound, of bound + 1 ending in the next chunk, a huge line then a
// good one in one chunk, many empty lines, a character split across chunks, a NUL (-32700); an
// upstream batch answering an id never sent, answering one id twice (the second dropped), mixing a
// response, a sampling request and notifications, `[]` and `[[…]]` (invalid, dropped), a drifted
// listing in a batch (judged as a single message); Mcp-Name sentinels in another Unicode
// normalization, with inner whitespace, `=?BASE64?` (a literal: the markers are case-sensitive),
// for a plain-ASCII name (served, as a server decodes it), on a method that mirrors nothing, and a
// tasks/* taskId that is not a string (-32020); a request id reused after a refusal on wrap; the
// `client.invalid_message` and invalid-upstream log lines (reasons only, never content).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LineFramer } from '../../packages/gateway/src/wire/lineFramer.js';
import { statelessEnvelope } from '../support/rawMcp.js';
import { until } from '../support/until.js';
import { exchangeRaw, rawPost } from './support/rawClient.js';
import { echoCall, useRawWrap } from './support/rawWrap.js';
import { useCatalogRig } from './support/rig.js';
import { METEO } from './support/tools.js';

// --- Finding A: wrap answered a request it refused as "not JSON-RPC" under `id: null`, though the
// request had a usable id (transports.md: "-32600 (with the request's id when it has a usable one,
// else null)"): params a string, `jsonrpc` "1.0", nested too deep, or a batch holding one invalid
// member or one id twice. On HTTP the 400 ends the client's request; on stdio nothing else does: the
// client's request under that id waited forever, the very hang wrap's own parser was to end. Now
// every request-shaped message with a usable id gets its -32600 under that id (a batch: an array,
// one per id), and a response's id (the server's id space) is never echoed.

describe('redteam15 finding A: wrap refused a request with a usable id under id null (it waited forever)', () => {
  const raw = useRawWrap();

  const deep = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('answers each refused request under its own id, once, and runs nothing', async () => {
    raw.write('{"jsonrpc":"2.0","id":31,"method":"tools/call","params":"echo"}\n');
    raw.write('{"jsonrpc":"1.0","id":"32","method":"ping"}\n');
    raw.write(`{"jsonrpc":"2.0","id":33,"method":"ping","params":{"a":${deep(300)}}}\n`);
    raw.write(`[${echoCall(34, 'batched')},5]\n`);
    raw.write(`[${echoCall(35, 'twice')},${echoCall(35, 'twice')},${echoCall(36, 'beside')}]\n`);
    raw.write(`${echoCall(99, 'sentinel')}\n`);
    await until(() => (raw.answersTo(99).length > 0 ? true : undefined), 'the sentinel call');
    for (const id of [31, '32', 33, 34, 35, 36])
      expect(raw.answersTo(id)).toEqual([
        expect.objectContaining({ error: expect.objectContaining({ code: -32600 }) }),
      ]);
    // The two batches are answered as batches.
    expect(raw.lines().filter(Array.isArray)).toHaveLength(2);
    expect(raw.answersTo(null)).toEqual([]);
    expect(await raw.calls()).toEqual(['echo']);
  });

  it('never echoes the id of a response (the server’s id space): that refusal stays id null', async () => {
    raw.write('{"jsonrpc":"2.0","id":41,"result":{},"error":{"code":1,"message":"x"}}\n');
    raw.write('{"jsonrpc":"2.0","id":42,"method":"ping","result":{}}\n');
    raw.write(`${echoCall(98, 'sentinel')}\n`);
    await until(() => (raw.answersTo(98).length > 0 ? true : undefined), 'the sentinel call');
    expect(raw.answersTo(41)).toEqual([]);
    expect(raw.answersTo(42)).toEqual([]);
    expect(raw.answersTo(null)).toHaveLength(2);
  });
});

// --- Finding B: the Mcp-Name sentinel was decoded with a TextDecoder that strips a leading UTF-8
// BOM (the WHATWG default), so `=?base64?` of "\uFEFFmétéo" passed as the body's "météo". The
// header and the body then disagree for every reader that keeps the BOM (Python's and Go's
// decoders, a byte-wise router before the gateway): an intermediary authorizing on Mcp-Name saw
// another name than the one called. `Mcp-Param-*` (the same `decodeParamValue`) likewise. The
// sentinel is now decoded exactly (the BOM kept): its text must be the body's, character for character.

describe('redteam15 finding B: an Mcp-Name sentinel with a leading BOM passed as the body’s name', () => {
  const rig = useCatalogRig([METEO]);

  const sentinel = (text: string): string => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
  const post = (id: string, name: string) =>
    exchangeRaw(
      rig.endpoint,
      rawPost(
        rig.endpoint,
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'météo', arguments: { city: 'Lyon' }, _meta: statelessEnvelope('rt15') },
        }),
        [
          ['Mcp-Protocol-Version', '2026-07-28'],
          ['Mcp-Method', 'tools/call'],
          ['Mcp-Name', name],
        ],
      ),
    );

  it('refuses it (-32020), nothing forwarded; the exact sentinel is still served', async () => {
    const refused = await post('1', sentinel('\ufeffmétéo'));
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({ id: '1', error: { code: -32020 } });
    expect(rig.upstream.executed).toEqual([]);
    const served = await post('2', sentinel('météo'));
    expect(served.status).toBe(200);
    expect(rig.upstream.executed).toEqual(['météo']);
  });
});

// --- Finding C: LineFramer kept each piece of an unfinished line as the Buffer it came in, so the
// 10 MiB bound counted bytes, not what they cost: a stdio server writing its line a byte at a time
// (a pipe then reads ~1 byte a chunk) made the gateway hold one Buffer object per byte, hundreds of
// bytes each (measured on a real pipe: ~700 B a chunk, so a 10 MiB line held ~2 GB; wrap's stdin
// likewise). The pieces are now copied into one buffer that doubles: a line costs at most twice
// its bytes, and no chunk is held.

describe('redteam15 finding C: a line dripped a byte per chunk held one Buffer per byte', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;

  it('holds no chunk of an unfinished line, and still hands the line over whole', async () => {
    const framer = new LineFramer(1024 * 1024);
    // Each chunk's own memory (a piece kept is a view of it, so the view's memory is what is held).
    const held: WeakRef<ArrayBufferLike>[] = [];
    const line = Buffer.from(
      `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(2000)}"}}`,
    );
    const lines: string[] = [];
    const push = (chunk: Buffer): void =>
      framer.push(chunk, (bytes) => {
        lines.push(bytes === undefined ? '(too large)' : bytes.toString('utf8'));
        return true;
      });
    (() => {
      for (const byte of line) {
        const chunk = Buffer.allocUnsafeSlow(1);
        chunk[0] = byte;
        held.push(new WeakRef(chunk.buffer));
        push(chunk);
      }
    })();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(held.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    push(Buffer.from('\n'));
    expect(lines).toEqual([line.toString('utf8')]);
  });
});
