import { TRACE_PROFILE } from '@toolpin/digest';
import { parsePinFile, serializePinFile, type ServerConfig } from '../../src/config/index.js';
import { pinFromCatalog } from '../../src/config/pinFromCatalog.js';
import { ServerCheckpoint } from '../../src/checkpoint/serverCheckpoint.js';
import { Alerts } from '../../src/observe/alerts.js';
import { createLogger } from '../../src/observe/logger.js';
import { SessionStore } from '../../src/state/sessionStore.js';
import { ToolDigester } from '../../src/state/toolDigester.js';

const SESSION = 'session-1';

const REMOTE = {
  name: 'remote',
  inputSchema: { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } },
};
const ADD = {
  name: 'add',
  inputSchema: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] },
};
const REPORT = {
  name: 'report',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
};
const SEARCH = {
  name: 'search',
  inputSchema: {
    type: 'object',
    properties: { q: { type: 'string' }, verbose: { type: 'boolean' } },
    required: ['q'],
    additionalProperties: false,
  },
};
const TOOLS = [REMOTE, ADD, REPORT, SEARCH];

/** The pin `toolpin pin` would write for TOOLS, read back; `definitions: false` drops them (a hand-written pin). */
function configOf(
  mode: 'enforce' | 'monitor',
  definitions = true,
  validate?: ServerConfig['validate'],
): ServerConfig {
  const observed = pinFromCatalog(TOOLS, TRACE_PROFILE);
  const text = serializePinFile(
    {
      name: 'srv',
      upstream: { url: 'http://127.0.0.1:9/mcp' },
      mode,
      pin: observed.pin,
      ...(definitions ? { definitions: observed.definitions } : {}),
      ...(validate === undefined ? {} : { validate }),
    },
    'json',
  );
  return parsePinFile(text, '/pins/srv.json');
}

function startGuard(config: ServerConfig) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const guard = new ServerCheckpoint({
    config,
    sessions: new SessionStore(),
    digester: new ToolDigester(),
    alerts: new Alerts(logger),
    logger,
  });
  // The session is served the pinned catalog.
  guard.expectAnswer(SESSION, 'list-1', 'tools/list', {});
  const verdict = guard.inspectUpstreamText(
    SESSION,
    JSON.stringify({ jsonrpc: '2.0', id: 'list-1', result: { tools: TOOLS } }),
  );
  expect(verdict.ok).toBe(true);
  return { guard, events: (event: string) => lines.filter((line) => line.event === event) };
}

/** What the client receives for one upstream result text. */
function answer(guard: ServerCheckpoint, message: unknown): unknown {
  const verdict = guard.inspectUpstreamText(SESSION, JSON.stringify(message));
  if (!verdict.ok) throw new Error(verdict.problem);
  return verdict.out[0];
}

describe('ServerCheckpoint: calls whose pinned schema cannot be checked', () => {
  it('refuses a call to a tool whose pinned inputSchema cannot be compiled as unverifiable, logged once', () => {
    const { guard, events } = startGuard(configOf('enforce'));
    for (let i = 0; i < 2; i++)
      expect(guard.decideKnownCall(SESSION, 'remote', { a: 1 })).toMatchObject({
        kind: 'deny',
        data: { reason: 'unverifiable', tool: 'remote' },
      });
    expect(events('schema.unchecked')).toEqual([
      expect.objectContaining({
        tool: 'remote',
        why: 'uncompilable',
        problem: expect.stringContaining('$ref'),
      }),
    ]);
  });

  it('flags it in monitor mode', () => {
    const { guard } = startGuard(configOf('monitor'));
    expect(guard.decideKnownCall(SESSION, 'remote', {})).toMatchObject({
      kind: 'allow',
      flagged: { reason: 'unverifiable' },
    });
  });

  it('allows calls when the pin records no definitions (a hand-written pin), saying so once per tool', () => {
    const { guard, events } = startGuard(configOf('enforce', false));
    expect(guard.decideKnownCall(SESSION, 'add', { a: 'x' })).toEqual({ kind: 'allow' });
    expect(guard.decideKnownCall(SESSION, 'add', {})).toEqual({ kind: 'allow' });
    expect(events('schema.unchecked')).toEqual([
      expect.objectContaining({ tool: 'add', why: 'no_definition' }),
    ]);
  });

  it('reads null for an optional property as absent by default; validate: strict refuses it as before', () => {
    const lenient = startGuard(configOf('enforce')).guard;
    expect(lenient.decideKnownCall(SESSION, 'search', { q: 'x', verbose: null })).toEqual({ kind: 'allow' });
    // A required property's null, and an undeclared member's, are values still.
    expect(lenient.decideKnownCall(SESSION, 'search', { q: null })).toMatchObject({
      kind: 'deny',
      data: { reason: 'arguments_invalid', problems: [{ pointer: '/q', keyword: 'type' }] },
    });
    expect(lenient.decideKnownCall(SESSION, 'search', { q: 'x', other: null })).toMatchObject({
      data: { reason: 'arguments_invalid', problems: [{ pointer: '', keyword: 'additionalProperties' }] },
    });
    // Both readings misfit: the problem reported is that of the arguments with the null read as absent.
    expect(lenient.decideKnownCall(SESSION, 'search', { q: 1, verbose: null })).toMatchObject({
      data: { reason: 'arguments_invalid', problems: [{ pointer: '/q', keyword: 'type' }] },
    });
    for (const validate of ['strict', { 'tool:search': 'strict' }] as const) {
      const strict = startGuard(configOf('enforce', true, validate)).guard;
      expect(strict.decideKnownCall(SESSION, 'search', { q: 'x', verbose: null })).toMatchObject({
        kind: 'deny',
        data: { reason: 'arguments_invalid', problems: [{ pointer: '/verbose', keyword: 'type' }] },
      });
      expect(strict.decideKnownCall(SESSION, 'search', { q: 'x', verbose: true })).toEqual({ kind: 'allow' });
    }
    // strict on another tool leaves this one lenient.
    const other = startGuard(configOf('enforce', true, { 'tool:add': 'strict' })).guard;
    expect(other.decideKnownCall(SESSION, 'search', { q: 'x', verbose: null })).toEqual({ kind: 'allow' });
  });

  it('checks a call made without arguments as no arguments', () => {
    const { guard } = startGuard(configOf('enforce'));
    expect(guard.decideKnownCall(SESSION, 'add', undefined)).toMatchObject({
      kind: 'deny',
      data: { reason: 'arguments_invalid', problems: [{ pointer: '/a', keyword: 'required' }] },
    });
  });
});

describe('ServerCheckpoint: results checked against the pinned outputSchema', () => {
  it('checks only the results of calls it allowed and remembered, by id', () => {
    const { guard, events } = startGuard(configOf('enforce'));
    const bad = { content: [], structuredContent: { n: 'x' } };
    // Not remembered: passed on unchecked.
    answer(guard, { jsonrpc: '2.0', id: 7, result: bad });
    expect(events('call.flagged')).toHaveLength(0);
    guard.expectResult(SESSION, 7, 'report');
    answer(guard, { jsonrpc: '2.0', id: 7, result: bad });
    expect(events('call.flagged')).toEqual([
      expect.objectContaining({
        decision: expect.objectContaining({ reason: 'output_invalid', tool: 'report' }),
      }),
    ]);
    // Taken once: a second answer under the same id is not checked again.
    answer(guard, { jsonrpc: '2.0', id: 7, result: bad });
    expect(events('call.flagged')).toHaveLength(1);
  });

  it('counts a missing structuredContent as a misfit, but not on an error result', () => {
    const { guard, events } = startGuard(configOf('enforce'));
    guard.expectResult(SESSION, 1, 'report');
    answer(guard, { jsonrpc: '2.0', id: 1, result: { content: [], isError: true } });
    expect(events('call.flagged')).toHaveLength(0);
    guard.expectResult(SESSION, 2, 'report');
    answer(guard, { jsonrpc: '2.0', id: 2, result: { content: [] } });
    expect(events('call.flagged').at(-1)?.decision).toMatchObject({
      reason: 'output_invalid',
      problems: [{ pointer: '', keyword: 'required' }],
    });
  });

  it('replaces the result under onBadOutput: block, and checks a reused id against the newer call', () => {
    const { guard, events } = startGuard({ ...configOf('enforce'), onBadOutput: 'block' });
    guard.expectResult(SESSION, 3, 'report');
    expect(answer(guard, { jsonrpc: '2.0', id: 3, result: { structuredContent: {} } })).toMatchObject({
      id: 3,
      error: { code: -32040, data: { reason: 'output_invalid' } },
    });
    expect(events('call.blocked')).toHaveLength(1);
    // A session's id reused while a call's answer never came: the newer call is what the client
    // awaits under that id, so the answer is checked against its tool (sessionless callers that
    // share a credential each have their exchange's own ids: see AnswerBook).
    guard.expectResult(SESSION, 4, 'other');
    guard.expectResult(SESSION, 4, 'report');
    expect(answer(guard, { jsonrpc: '2.0', id: 4, result: { structuredContent: {} } })).toMatchObject({
      id: 4,
      error: { code: -32040, data: { reason: 'output_invalid' } },
    });
  });
});
