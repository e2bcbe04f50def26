import { decideArguments, decideOutput } from '../../src/policy/decideArguments.js';
import type { SchemaCheck } from '../../src/policy/schemaProblems.js';
import { pinnedConfig, plainTool } from './pinnedTools.js';

const MISFIT: SchemaCheck = { kind: 'misfit', problems: [{ pointer: '/text', keyword: 'type' }] };

describe('decideArguments', () => {
  it('refuses misfit arguments in enforce mode with arguments_invalid and the problems', () => {
    const pin = pinnedConfig([plainTool()]);
    expect(decideArguments(pin, 'echo', MISFIT)).toMatchObject({
      kind: 'deny',
      message: expect.stringContaining('inputSchema'),
      data: {
        reason: 'arguments_invalid',
        server: 'srv',
        tool: 'echo',
        key: 'tool:echo',
        pinned: pin.pin.tools['tool:echo'],
        observed: pin.pin.tools['tool:echo'],
        problems: [{ pointer: '/text', keyword: 'type' }],
      },
    });
  });

  it('flags them in monitor mode, and calls an uncompilable pinned schema unverifiable', () => {
    const monitor = pinnedConfig([plainTool()], { mode: 'monitor' });
    expect(decideArguments(monitor, 'echo', MISFIT)).toMatchObject({
      kind: 'allow',
      flagged: { reason: 'arguments_invalid' },
    });
    const enforce = pinnedConfig([plainTool()]);
    expect(decideArguments(enforce, 'echo', { kind: 'uncompilable', problem: 'x' })).toMatchObject({
      kind: 'deny',
      data: { reason: 'unverifiable', tool: 'echo' },
    });
  });

  it('allows fitting arguments and a tool with nothing to check against', () => {
    const pin = pinnedConfig([plainTool()]);
    expect(decideArguments(pin, 'echo', { kind: 'fits' })).toEqual({ kind: 'allow' });
    expect(decideArguments(pin, 'echo', { kind: 'unchecked', why: 'opted_out' })).toEqual({ kind: 'allow' });
  });
});

describe('decideOutput', () => {
  it('flags a misfit result by default, blocks it under onBadOutput: block, flags it in monitor mode', () => {
    const pin = pinnedConfig([plainTool()]);
    expect(decideOutput(pin, 'echo', MISFIT)).toMatchObject({
      kind: 'allow',
      flagged: { reason: 'output_invalid', problems: [{ pointer: '/text', keyword: 'type' }] },
    });
    expect(decideOutput({ ...pin, onBadOutput: 'block' }, 'echo', MISFIT)).toMatchObject({
      kind: 'deny',
      data: { reason: 'output_invalid' },
    });
    const monitor = pinnedConfig([plainTool()], { mode: 'monitor' });
    expect(decideOutput({ ...monitor, onBadOutput: 'block' }, 'echo', MISFIT)).toMatchObject({
      kind: 'allow',
    });
    expect(decideOutput(pin, 'echo', { kind: 'fits' })).toBeUndefined();
  });
});

describe('validation budgets', () => {
  it('refuses a call whose arguments were too large to check as unverifiable, naming the bound', () => {
    const pin = pinnedConfig([plainTool()]);
    const decision = decideArguments(pin, 'echo', { kind: 'over_budget', bound: 'unique_items' });
    expect(decision).toMatchObject({
      kind: 'deny',
      message: expect.stringContaining('too large to check'),
      data: { reason: 'unverifiable', tool: 'echo', bound: 'unique_items' },
    });
  });

  it('says a call or result too costly for its schema (bound: evaluations) would cost too much to check', () => {
    const pin = pinnedConfig([plainTool()]);
    const over = { kind: 'over_budget', bound: 'evaluations' } as const;
    expect(decideArguments(pin, 'echo', over)).toMatchObject({
      kind: 'deny',
      message: expect.stringContaining('would cost too much to check against the inputSchema'),
      data: { reason: 'unverifiable', tool: 'echo', bound: 'evaluations' },
    });
    expect(decideOutput({ ...pin, onBadOutput: 'block' }, 'echo', over)).toMatchObject({
      kind: 'deny',
      message: expect.stringContaining('structuredContent would cost too much to check'),
      data: { reason: 'unverifiable', bound: 'evaluations' },
    });
  });

  it('treats a result too large to check as onBadOutput says: flagged by default, blocked under block', () => {
    const over = { kind: 'over_budget', bound: 'bytes' } as const;
    expect(decideOutput(pinnedConfig([plainTool()]), 'echo', over)).toMatchObject({
      kind: 'allow',
      flagged: { reason: 'unverifiable', bound: 'bytes' },
    });
    expect(
      decideOutput({ ...pinnedConfig([plainTool()]), onBadOutput: 'block' }, 'echo', over),
    ).toMatchObject({
      kind: 'deny',
      message: expect.stringContaining('the result of'),
      data: { reason: 'unverifiable', bound: 'bytes' },
    });
  });
});
