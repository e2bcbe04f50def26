import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { callRequest, openRawSession, parseSseEvents, postRaw, type RawReply } from '../support/rawMcp.js';
import { catalogAtStart, fixtureCommand, stdioPinFor } from './support.js';

/** One JSON-RPC response as a client reads it. */
interface Answer {
  id: unknown;
  result?: { content?: unknown };
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** The JSON-RPC responses of a reply: a JSON array body, or one per SSE event. */
function answersOf(reply: RawReply): Answer[] {
  return reply.messages.flatMap((message) => (Array.isArray(message) ? message : [message])) as Answer[];
}

const NOTIFICATION = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };

// A stdio child behind the gateway's own Streamable HTTP endpoint, serving the drifted `echo` from
// the start: the pin approves the undrifted catalog, so `echo` is refused and `add` allowed.
describe('bridged endpoint: JSON-RPC batches of a stdio upstream', () => {
  let dir: string;
  let callLog: string;
  let gateway: GatewayHarness;
  let endpoint: string;

  async function executedCalls(): Promise<string[]> {
    return (await readFile(callLog, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-batches-'));
    callLog = join(dir, 'calls.log');
    const tools = await catalogAtStart(fixtureCommand());
    const env = { TOOLPIN_FIXTURE_DRIFT: '1', TOOLPIN_FIXTURE_CALL_LOG: callLog };
    gateway = await startGatewayHarness([stdioPinFor('drifting', fixtureCommand(), tools, env)]);
    endpoint = `${gateway.url}/drifting/mcp`;
  });

  afterAll(async () => {
    await gateway?.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe.each(['2025-03-26', '2025-06-18', '2025-11-25'])('a %s session', (revision) => {
    let session: Record<string, string>;

    beforeAll(async () => {
      session = await openRawSession(endpoint, {}, revision);
    });

    afterAll(async () => {
      await fetch(endpoint, { method: 'DELETE', headers: session });
    });

    it('answers the refused member with -32040 and forwards the allowed one, in one well-formed reply', async () => {
      const before = await executedCalls();
      const reply = await postRaw(
        endpoint,
        [callRequest(1, 'add', { a: 2, b: 3 }), callRequest(2, 'echo', { text: 'hi' }), NOTIFICATION],
        session,
      );
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const answers = answersOf(reply);
      expect(answers.map((answer) => answer.id).sort()).toEqual([1, 2]);
      expect(answers.find((answer) => answer.id === 1)).toEqual({
        jsonrpc: '2.0',
        id: 1,
        result: { content: [{ type: 'text', text: '5' }] },
      });
      expect(answers.find((answer) => answer.id === 2)).toEqual({
        jsonrpc: '2.0',
        id: 2,
        error: expect.objectContaining({
          code: -32040,
          data: expect.objectContaining({ reason: 'tool_drifted', server: 'drifting', tool: 'echo' }),
        }),
      });
      // Only the allowed member reached the child.
      expect((await executedCalls()).slice(before.length)).toEqual(['add']);
    });

    it('streams the progress of a batched call before its answer, beside the refusal', async () => {
      const slow = {
        ...callRequest(4, 'slow', { steps: 2 }),
        params: { name: 'slow', arguments: { steps: 2 }, _meta: { progressToken: 'p-4' } },
      };
      const reply = await postRaw(endpoint, [slow, callRequest(5, 'echo', { text: 'x' })], session);
      expect(reply.status).toBe(200);
      // Every SSE event carries one JSON-RPC message and an id to resume from.
      const events = parseSseEvents(reply.text).filter((event) => event.data !== '');
      expect(events.every((event) => event.id !== undefined && !event.data.startsWith('['))).toBe(true);
      const messages = reply.messages as { id?: unknown; method?: string; params?: { progress?: number } }[];
      const progress = messages.filter((message) => message.method === 'notifications/progress');
      expect(progress.map((message) => message.params?.progress)).toEqual([1, 2]);
      expect(messages.findIndex((message) => message.id === 4)).toBeGreaterThan(
        messages.lastIndexOf(progress.at(-1) ?? {}),
      );
      expect(answersOf(reply).find((answer) => answer.id === 5)?.error?.code).toBe(-32040);
    });

    it('answers a batch of only refused calls without reaching the child', async () => {
      const before = await executedCalls();
      const reply = await postRaw(
        endpoint,
        [callRequest('a', 'echo', { text: 'x' }), callRequest('b', 'echo', { text: 'y' })],
        session,
      );
      expect(reply.status).toBe(200);
      expect(answersOf(reply).map((answer) => [answer.id, answer.error?.code])).toEqual([
        ['a', -32040],
        ['b', -32040],
      ]);
      expect(await executedCalls()).toEqual(before);
    });

    it('refuses a batch that uses one request id twice, before anything reaches the child', async () => {
      const before = await executedCalls();
      const reply = await postRaw(
        endpoint,
        [callRequest(9, 'add', { a: 1, b: 2 }), callRequest(9, 'echo', { text: 'y' })],
        session,
      );
      expect(reply.status).toBe(400);
      expect(reply.messages).toEqual([
        { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600 }) },
      ]);
      expect(await executedCalls()).toEqual(before);
    });

    it('takes a batch of notifications with 202 and no body', async () => {
      const reply = await postRaw(endpoint, [NOTIFICATION, NOTIFICATION], session);
      expect(reply.status).toBe(202);
      expect(reply.text).toBe('');
    });

    it('verifies a tools/list answered inside a batch', async () => {
      const reply = await postRaw(
        endpoint,
        [{ jsonrpc: '2.0', id: 'list', method: 'tools/list' }, callRequest(3, 'add', { a: 1, b: 1 })],
        session,
      );
      const answers = answersOf(reply);
      const list = answers.find((answer) => answer.id === 'list') as
        { result: { tools: { name: string }[] } } | undefined;
      expect(list?.result.tools.map((tool) => tool.name).sort()).toEqual([
        'add',
        'crash',
        'rug-pull',
        'slow',
      ]);
      expect(answers.find((answer) => answer.id === 3)?.result).toEqual({
        content: [{ type: 'text', text: '2' }],
      });
      expect(reply.text).not.toContain('id_rsa');
    });
  });

  it('answers every member of a batch when the child crashes under it, and ends the session', async () => {
    const session = await openRawSession(endpoint, {}, '2025-03-26');
    const reply = await postRaw(
      endpoint,
      [callRequest(1, 'echo', { text: 'x' }), callRequest(2, 'crash'), callRequest(3, 'add', { a: 1, b: 1 })],
      session,
    );
    expect(reply.status).toBe(200);
    const codes = Object.fromEntries(answersOf(reply).map((answer) => [answer.id, answer.error?.code]));
    // echo is refused; crash is never answered by the child; add may or may not have been answered
    // before the child died, and is answered either way.
    expect(codes[1]).toBe(-32040);
    expect(codes[2]).toBe(-32041);
    expect(Object.keys(codes).sort()).toEqual(['1', '2', '3']);
    const after = await postRaw(endpoint, callRequest(4, 'add', { a: 1, b: 1 }), session);
    expect(after.status).toBe(404);
  });
});
