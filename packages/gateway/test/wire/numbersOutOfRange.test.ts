import { jsonValueProblem, MAX_JSON_DEPTH } from '../../src/wire/jsonDepth.js';
import { parseJsonRpcBody } from '../../src/wire/jsonRpc.js';
import { checkUpstreamMessage } from '../../src/wire/upstreamMessage.js';

// JSON.parse reads these as ±Infinity, and JSON.stringify writes Infinity as null.
const CALL =
  '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list","arguments":{"limit":1e400}}}';

describe('numbers that do not survive a round trip', () => {
  it('shows the change the gateway must never make: 1e400 is parsed as Infinity and sent as null', () => {
    expect(JSON.stringify(JSON.parse(CALL))).toContain('"limit":null');
  });

  it('refuses a tools/call holding one in its arguments: -32600 arguments_invalid, with its id and pointer', () => {
    expect(parseJsonRpcBody(CALL)).toEqual({
      ok: false,
      code: -32600,
      message: expect.stringContaining('out of range'),
      id: 7,
      data: { reason: 'arguments_invalid', tool: 'list', problems: [{ pointer: '/limit', keyword: 'type' }] },
      requests: { batch: false, ids: [7] },
    });
    const nested = CALL.replace('{"limit":1e400}', '{"filter":{"a/b":[1,-1e400]}}');
    expect(parseJsonRpcBody(nested)).toMatchObject({
      data: { reason: 'arguments_invalid', problems: [{ pointer: '/filter/a~1b/1', keyword: 'type' }] },
    });
  });

  it('refuses one anywhere else in a message as number_out_of_range, in a batch too', () => {
    const elsewhere = '{"jsonrpc":"2.0","id":"p","method":"prompts/get","params":{"name":"g","n":1E+999}}';
    expect(parseJsonRpcBody(elsewhere)).toMatchObject({
      ok: false,
      code: -32600,
      id: 'p',
      data: { reason: 'number_out_of_range', pointer: '/params/n' },
    });
    const batch = `[{"jsonrpc":"2.0","id":1,"method":"ping"},${CALL}]`;
    expect(parseJsonRpcBody(batch)).toMatchObject({
      ok: false,
      id: 7,
      data: { reason: 'arguments_invalid' },
    });
    const notification = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1e400}}';
    expect(parseJsonRpcBody(notification)).toMatchObject({ ok: false, id: null });
  });

  it('keeps numbers that do survive, however written (1e308, -0, 1e-400 read as 0)', () => {
    for (const value of ['1e308', '-0', '1e-400', '123456789012345678901234567890'])
      expect(parseJsonRpcBody(CALL.replace('1e400', value)).ok).toBe(true);
  });

  it('drops an upstream message holding one as invalid, keeping the id it answers', () => {
    const answer = JSON.parse('{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"total":1e400}}}');
    expect(checkUpstreamMessage(answer)).toEqual({
      reason: 'invalid_message',
      problem: expect.stringContaining('out of range'),
      id: 3,
    });
  });

  it('refuses a numeric id beyond 2^53 - 1 from a client, and drops one from an upstream', () => {
    const unsafe = '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}';
    // Not even wrap answers under it: no id a reader may match.
    expect(parseJsonRpcBody(unsafe)).toMatchObject({
      ok: false,
      code: -32600,
      id: null,
      requests: { batch: false, ids: [] },
    });
    expect(parseJsonRpcBody(unsafe.replace('9007199254740993', '9007199254740991')).ok).toBe(true);
    expect(
      checkUpstreamMessage(JSON.parse('{"jsonrpc":"2.0","id":-9007199254740993,"result":{}}')),
    ).toMatchObject({
      reason: 'invalid_message',
      problem: expect.stringContaining('2^53'),
    });
  });

  it('measures depth and finiteness in one walk, without recursion', () => {
    let deep: unknown = 1;
    for (let level = 0; level < MAX_JSON_DEPTH + 1; level++) deep = [deep];
    expect(jsonValueProblem(deep)).toEqual({ kind: 'too_deep' });
    expect(jsonValueProblem(Infinity)).toEqual({ kind: 'non_finite', pointer: '' });
    expect(jsonValueProblem({ a: [{ 'x~y': -Infinity }] })).toEqual({
      kind: 'non_finite',
      pointer: '/a/0/x~0y',
    });
    expect(jsonValueProblem({ a: [1, 'b', null, { c: 2 }] })).toBeUndefined();
  });
});
