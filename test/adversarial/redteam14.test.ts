// Red team 14: exact bytes on `toolpin wrap`'s stdio (both sides), the pinned surfaces through
// pagination, and the 2026-07-28 routing headers. Each describe is one finding: the attack first,
// then the gateway's answer. In-process gateways and wraps; the stdio servers are small children.
// What was tried and found sound (no describe here): CRLF, a lone \r, U+2028/U+2029, invalid UTF-8
// and lines split across writes on either side; an upstream answering an id never sent, answering
// twice, writing before initialize; prompts duplicated or drifted across pages (refused
// `unverifiable` / `prompt_drifted`, fetch on miss over every page); Mcp-Method/Mcp-Name in another
// case, with spaces, repeated, or on a batch (-32020).
import { startGatewayHarness } from '../support/gatewayHarness.js';
import { postRaw, statelessEnvelope } from '../support/rawMcp.js';
import { until } from '../support/until.js';
import { RAW_DRIFTED_ECHO, RAW_ECHO, stdioPinFor } from '../transports/support.js';
import { exchangeRaw, rawPost } from './support/rawClient.js';
import { echoCall, startRawWrap, useRawWrap } from './support/rawWrap.js';
import { useCatalogRig } from './support/rig.js';
import { METEO } from './support/tools.js';

// --- Finding A: wrap's stdin was read by the SDK's StdioServerTransport, whose schemas dropped every
// line they refused with no answer: not JSON, a UTF-8 BOM, a batch, an id past 2^53 or null, params
// an array, a member beside JSON-RPC's, a progress token that is an object. The client's request
// then waited forever (nothing was in flight, so no timeout answered it either), and a line over
// 10 MiB closed the client side (the session ended, its requests unanswered). wrap now reads its
// stdin with the gateway's own parser (`ingress/stdioFrontTransport.ts`, the HTTP fronts' rules):
// every line gets its answer, and the session goes on.

describe('redteam14 finding A: a line on wrap’s stdin the SDK’s schema refused was never answered', () => {
  const raw = useRawWrap();

  it('answers each refused line once (-32700 / -32600) and runs nothing of it', async () => {
    raw.write('this is not json\n');
    raw.write(`\ufeff${echoCall(1, 'bom')}\n`);
    raw.write(`[${echoCall(2, 'batched')},{"jsonrpc":"2.0","method":"notifications/progress"}]\n`);
    raw.write(`${echoCall(4, 'big id').replace('"id":4,', '"id":9007199254740993,')}\n`);
    raw.write(`${echoCall(null, 'null id')}\n`);
    raw.write('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":["echo",{"text":"positional"}]}\n');
    raw.write(`${echoCall(99, 'sentinel')}\n`);
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
    raw.write(`${echoCall(10, 'extra').slice(0, -1)},"decoy":{"x":1}}\r\n`);
    raw.write(
      '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t"},"_meta":{"progressToken":{"a":1}}}}\n',
    );
    // One line in one-byte writes, and U+2028 inside a string.
    for (const byte of Buffer.from(`${echoCall(12, 'a\u2028b')}\n`)) raw.write(Buffer.from([byte]));
    await until(() => (raw.answersTo(12).length > 0 ? true : undefined), 'the split call');
    for (const id of [10, 11])
      await until(() => (raw.answersTo(id).length > 0 ? true : undefined), `call ${id}`);
    expect(raw.answersTo(10)[0]?.result).toEqual({ content: [{ type: 'text', text: 'extra' }] });
    expect(raw.answersTo(11)[0]?.result).toEqual({ content: [{ type: 'text', text: 't' }] });
    expect(raw.answersTo(12)[0]?.result).toEqual({ content: [{ type: 'text', text: 'a\u2028b' }] });
  });

  it('answers a line over the bound and goes on (the SDK closed the session)', async () => {
    const huge = `${echoCall(20, 'x'.repeat(10 * 1024 * 1024))}\n`;
    raw.write(huge);
    raw.write(`${echoCall(21, 'after')}\n`);
    await until(() => (raw.answersTo(21).length > 0 ? true : undefined), 'the call after the huge line');
    expect(raw.answersTo(21)[0]?.result).toEqual({ content: [{ type: 'text', text: 'after' }] });
    expect(raw.answersTo(null).at(-1)?.error).toMatchObject({ code: -32600 });
    expect(raw.answersTo(20)).toEqual([]);
  });
});

// --- Finding B: the Mcp-Name check compared the header's bytes with the body (2026-07-28, SEP-2243).
// A name that cannot ride in a header as it is (not ASCII, control characters, leading or trailing
// space) is sent in the Base64 sentinel, `=?base64?…?=`, and a server decodes it before comparing
// (the SDK v2 client encodes it, its server decodes it): the gateway refused such a call, that the
// server would serve, as a header that "disagrees with the body" (400, -32020). And `tasks/get`,
// `tasks/update`, `tasks/cancel` mirror `params.taskId` in Mcp-Name: the gateway refused every
// such header. Now Mcp-Name is decoded as Mcp-Param-* is (`decodeParamValue`), compared with its
// source field, and a sentinel that is not canonical Base64 of UTF-8 is refused as a server refuses it.

describe('redteam14 finding B: an Mcp-Name in the Base64 sentinel was refused as a mismatch', () => {
  const rig = useCatalogRig([METEO]);

  const post = (id: string, method: string, params: Record<string, unknown>, name: string) =>
    exchangeRaw(
      rig.endpoint,
      rawPost(
        rig.endpoint,
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method,
          params: { ...params, _meta: statelessEnvelope('rt14') },
        }),
        [
          ['Mcp-Protocol-Version', '2026-07-28'],
          ['Mcp-Method', method],
          ['Mcp-Name', name],
        ],
      ),
    );
  const sentinel = (text: string): string => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

  it('serves a call whose Mcp-Name is the sentinel of the body’s name, as the server reads it', async () => {
    const reply = await post(
      '1',
      'tools/call',
      { name: 'météo', arguments: { city: 'Lyon' } },
      sentinel('météo'),
    );
    expect(reply.status).toBe(200);
    expect(rig.upstream.executed).toEqual(['météo']);
  });

  it('still refuses a sentinel naming another tool, one that is not canonical Base64, and the literal sentinel text', async () => {
    const body = { name: 'météo', arguments: { city: 'Lyon' } };
    for (const [id, name] of [
      ['2', sentinel('evil')],
      ['3', '=?base64?bcOpdMOpbw?='],
    ] as const) {
      const reply = await post(id, 'tools/call', body, name);
      expect(reply.status).toBe(400);
      expect(JSON.parse(reply.body)).toMatchObject({ id, error: { code: -32020 } });
    }
    // A body name that is itself sentinel-shaped: its header must be encoded too (the server decodes).
    const literal = await post(
      '4',
      'tools/call',
      { name: sentinel('météo'), arguments: {} },
      sentinel('météo'),
    );
    expect(literal.status).toBe(400);
    expect(rig.upstream.executed).toEqual([]);
  });

  it('accepts Mcp-Name mirroring a task id (tasks/get), refuses one naming another task', async () => {
    const served = await post('5', 'tasks/get', { taskId: 't-1' }, 't-1');
    expect(served.status).not.toBe(400);
    expect(rig.upstream.requests.some((r) => r.messages.some((m) => m.method === 'tasks/get'))).toBe(true);
    const refused = await post('6', 'tasks/get', { taskId: 't-1' }, 't-2');
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({ id: '6', error: { code: -32020 } });
  });
});

// --- Finding C: a stdio server (or a legacy SSE event) answering in a JSON-RPC batch, an array on
// one line: the bridge checked the array as one message ("not a JSON object", no id) and dropped
// it, so the requests it answered went unanswered until the silence clock (wrap: 300 s; a server
// that keeps writing never lets it fire), and the 2026-07-28 shared upstream likewise. The HTTP
// proxy reads a batch answer message by message (`decideUpstreamText`); the bridge and the
// checked upstream transport now do too (`upstreamBatch`): each member judged as any message.

const BATCH_SERVER = `
const echo = ${JSON.stringify(RAW_ECHO)};
const drifted = ${JSON.stringify(RAW_DRIFTED_ECHO)};
let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let at = buffer.indexOf('\\n'); at !== -1; at = buffer.indexOf('\\n')) {
    const m = JSON.parse(buffer.slice(0, at));
    buffer = buffer.slice(at + 1);
    const out = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
    if (m.method === 'initialize')
      out({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'batch', version: '1' } } });
    else if (m.method === 'tools/list' && m.params?.cursor === undefined && String(m.id).startsWith('list-drift'))
      out([{ jsonrpc: '2.0', id: m.id, result: { tools: [drifted] } }]);
    else if (m.method === 'tools/list') out({ jsonrpc: '2.0', id: m.id, result: { tools: [echo] } });
    else if (m.method === 'tools/call')
      out([{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'in a batch' }] } }]);
  }
});
process.stdin.on('end', () => process.exit(0));
`;

describe('redteam14 finding C: an upstream answer in a JSON-RPC batch was dropped whole, its request unanswered', () => {
  it('wrap: the call answered in a batch gets that answer once; a drifted listing in a batch is judged', async () => {
    const raw = await startRawWrap([process.execPath, '-e', BATCH_SERVER]);
    try {
      raw.write(`${echoCall(1, 'x')}\n`);
      // Well within the 300 s silence clock: before, nothing came at all.
      await until(() => (raw.answersTo(1).length > 0 ? true : undefined), 'the batched answer', 80);
      expect(raw.answersTo(1)).toEqual([
        expect.objectContaining({ result: { content: [{ type: 'text', text: 'in a batch' }] } }),
      ]);
      raw.write('{"jsonrpc":"2.0","id":"list-drift","method":"tools/list"}\n');
      await until(
        () => (raw.answersTo('list-drift').length > 0 ? true : undefined),
        'the batched listing',
        80,
      );
      // Judged like any listing: the drifted echo is hidden.
      expect(raw.answersTo('list-drift')).toEqual([expect.objectContaining({ result: { tools: [] } })]);
    } finally {
      await raw.close();
    }
  });

  it('2026-07-28 through the shared upstream: the call answered in a batch is answered', async () => {
    const command = [process.execPath, '-e', BATCH_SERVER];
    const gateway = await startGatewayHarness([stdioPinFor('batch', command, [RAW_ECHO])]);
    try {
      const reply = await postRaw(
        `${gateway.url}/batch/mcp`,
        {
          jsonrpc: '2.0',
          id: 'c1',
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'x' }, _meta: statelessEnvelope() },
        },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
      );
      const answers = reply.messages.filter((m) => (m as { id?: unknown }).id === 'c1');
      expect(answers).toEqual([
        expect.objectContaining({
          result: expect.objectContaining({ content: [{ type: 'text', text: 'in a batch' }] }),
        }),
      ]);
    } finally {
      await gateway.close();
    }
  });
});

// --- Finding D: a client that closes its end of wrap's stdout (it exited, or closed the pipe before
// stdin) made wrap's next write fail with EPIPE, an 'error' event nobody heard: wrap died of an
// uncaught exception (a stack trace on stderr, exit code 1, the code that says the server ended the
// session). The stdio front now hears it as the client leaving: `client.output_closed`, the child
// stopped, exit 0.

describe('redteam14 finding D: the client closing its end of stdout crashed wrap (EPIPE unheard)', () => {
  it('ends the session as the client’s, exit 0, nothing uncaught', async () => {
    const raw = await startRawWrap();
    // What a real pipe does when its reader is gone: the next write fails with EPIPE.
    raw.wrap.stdout.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    raw.write(`${echoCall(1, 'after the client left')}\n`);
    expect(await raw.wrap.exited).toBe(0);
    expect(raw.wrap.events('client.output_closed')).toEqual([expect.objectContaining({ code: 'EPIPE' })]);
    expect(raw.wrap.events('wrap.stopped')).toEqual([expect.objectContaining({ endedBy: 'client' })]);
    await raw.close();
  });
});
