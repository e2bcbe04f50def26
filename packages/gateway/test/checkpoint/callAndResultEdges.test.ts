import { TRACE_PROFILE } from '@toolpin/digest';
import { parsePinFile, serializePinFile, type ServerConfig } from '../../src/config/index.js';
import { pinFromCatalog } from '../../src/config/pinFromCatalog.js';
import { ServerCheckpoint } from '../../src/checkpoint/serverCheckpoint.js';
import { Alerts } from '../../src/observe/alerts.js';
import { createLogger } from '../../src/observe/logger.js';
import { SessionStore } from '../../src/state/sessionStore.js';
import { ToolDigester } from '../../src/state/toolDigester.js';

// Edges found by the review of the merged landing: each was a way for a call or a result to pass
// unchecked; each is now refused or re-judged.

const CONVERT = {
  name: 'convert',
  description: 'Converts a temperature.',
  inputSchema: {
    type: 'object',
    properties: { unit: { type: 'string' } },
    additionalProperties: false,
  },
};
/** The same tool, narrowed (an enum added): a low drift. */
const CONVERT_NARROWED = {
  ...CONVERT,
  inputSchema: {
    ...CONVERT.inputSchema,
    properties: { unit: { type: 'string', enum: ['C', 'F'] } },
  },
};
const REPORT = {
  name: 'report',
  description: 'Reports a number.',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
};
const OTHER = {
  name: 'other',
  description: 'Reports a word.',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object', properties: { w: { type: 'string' } }, required: ['w'] },
};
const PINNED = [CONVERT, REPORT, OTHER];

function configOf(tools: readonly unknown[], extra: Record<string, unknown> = {}): ServerConfig {
  const observed = pinFromCatalog(tools, TRACE_PROFILE);
  const text = serializePinFile(
    {
      name: 'srv',
      upstream: { url: 'http://127.0.0.1:9/mcp' },
      pin: observed.pin,
      definitions: observed.definitions,
      ...extra,
    },
    'json',
  );
  return parsePinFile(text, '/pins/srv.json');
}

function guardServing(config: ServerConfig, served: readonly unknown[]): ServerCheckpoint {
  const logger = createLogger({ level: 'silent' });
  const guard = new ServerCheckpoint({
    config,
    sessions: new SessionStore(),
    digester: new ToolDigester(),
    alerts: new Alerts(logger),
    logger,
  });
  guard.expectAnswer('s', 'list-1', 'tools/list', {});
  guard.inspectUpstreamText('s', JSON.stringify({ jsonrpc: '2.0', id: 'list-1', result: { tools: served } }));
  return guard;
}

const result = (id: number, structuredContent: unknown): string =>
  JSON.stringify({ jsonrpc: '2.0', id, result: { content: [], structuredContent } });

function answered(guard: ServerCheckpoint, text: string): { error?: { data?: { reason?: string } } } {
  const verdict = guard.inspectUpstreamText('s', text);
  if (!verdict.ok) throw new Error(verdict.problem);
  return verdict.out[0] as { error?: { data?: { reason?: string } } };
}

describe('calls and results at the edges', () => {
  it('checks the arguments of a low-drift call flagged under { high: filter, low: flag }', () => {
    const guard = guardServing(configOf(PINNED, { onDrift: { high: 'filter', low: 'flag' } }), [
      CONVERT_NARROWED,
      REPORT,
      OTHER,
    ]);
    const misfit = guard.decideKnownCall('s', 'convert', { unit: 42, extra: 'x' });
    expect(misfit).toMatchObject({ kind: 'deny', data: { reason: 'arguments_invalid' } });
    const fitting = guard.decideKnownCall('s', 'convert', { unit: 'C' });
    expect(fitting).toMatchObject({ kind: 'allow', flagged: { reason: 'tool_drifted', severity: 'low' } });
  });

  it('reads an error under a null id as the answer to request 0 when 0 awaits one (Number(null) is 0)', () => {
    const guard = guardServing(configOf(PINNED, { onBadOutput: 'block' }), PINNED);
    const nullError = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'x' } });
    // Nothing awaits 0: an error that answers no request, relayed as such.
    expect(answered(guard, nullError)).toMatchObject({ id: null, error: { code: -32700 } });
    guard.expectResult('s', 0, 'report');
    expect(answered(guard, nullError)).toMatchObject({ id: 0, error: { code: -32700 } });
    // Request 0 is answered: the upstream's later result for it is not a second answer.
    expect(guard.inspectUpstreamText('s', result(0, { n: 'evil' }))).toEqual({
      ok: true,
      batch: false,
      out: [],
    });
  });

  it('answers each call once: a second answer under its id is dropped, never relayed', () => {
    const guard = guardServing(configOf(PINNED, { onBadOutput: 'block' }), PINNED);
    guard.expectResult('s', 1, 'report');
    expect(answered(guard, result(1, { n: 1 })).error).toBeUndefined();
    expect(guard.inspectUpstreamText('s', result(1, { n: 'evil' }))).toEqual({
      ok: true,
      batch: false,
      out: [],
    });
  });

  it('judges a reused id as the newer request, and forgets a call the gateway answered itself', () => {
    const guard = guardServing(configOf(PINNED, { onBadOutput: 'block' }), PINNED);
    // A client that reuses an id whose answer never came means its new request.
    guard.expectResult('s', 7, 'report');
    guard.expectResult('s', 7, 'other');
    expect(answered(guard, result(7, { n: 1 })).error?.data?.reason).toBe('output_invalid');
    // A call the gateway answered itself (a timeout, a refused answer): its late answer is dropped.
    guard.expectResult('s', 8, 'report');
    guard.forgetAnswers('s', [8]);
    expect(guard.inspectUpstreamText('s', result(8, { n: 'evil' }))).toEqual({
      ok: true,
      batch: false,
      out: [],
    });
    guard.expectResult('s', 8, 'other');
    expect(answered(guard, result(8, { w: 'ok' })).error).toBeUndefined();
  });

  it('checks a call answered with the exact text of a verified listing as a result', () => {
    const guard = guardServing(configOf(PINNED, { onBadOutput: 'block' }), PINNED);
    guard.expectResult('s', 'list-1', 'report');
    const listing = JSON.stringify({ jsonrpc: '2.0', id: 'list-1', result: { tools: PINNED } });
    expect(answered(guard, listing).error?.data?.reason).toBe('output_invalid');
  });

  // Red team: the SDK's clients match an answer to its request by Number(id), so an upstream that
  // answers call 4 under the id "4" (or "4.0", " 4") reaches the caller; the check matched ids
  // exactly and passed it unchecked. Likewise a listing answered under its id's other type.
  it.each(['4', '4.0', ' 4', '0x4'])(
    'checks a call answered under the id %j (the SDK reads it as 4)',
    (id) => {
      const guard = guardServing(configOf(PINNED, { onBadOutput: 'block' }), PINNED);
      guard.expectResult('s', 4, 'report');
      const text = JSON.stringify({
        jsonrpc: '2.0',
        id,
        result: { content: [], structuredContent: { n: 'evil' } },
      });
      expect(answered(guard, text).error?.data?.reason).toBe('output_invalid');
    },
  );

  it('checks the structured content of an error result', () => {
    const guard = guardServing(configOf(PINNED, { onBadOutput: 'block' }), PINNED);
    guard.expectResult('s', 3, 'report');
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      result: { content: [], isError: true, structuredContent: { n: 'evil' } },
    });
    expect(answered(guard, text).error?.data?.reason).toBe('output_invalid');
  });

  it('does not reuse verdicts judged under another pin after a reload', () => {
    const guard = guardServing(configOf(PINNED, { onDrift: 'block-server' }), PINNED);
    expect(guard.decideKnownCall('s', 'report', {})).toMatchObject({ kind: 'allow' });
    guard.replaceConfig(configOf([CONVERT_NARROWED, REPORT, OTHER], { onDrift: 'block-server' }));
    // Judged under the old pin: the call lists upstream first (fetch on miss) under the new one.
    expect(guard.decideKnownCall('s', 'report', {})).toBeUndefined();
  });
});
