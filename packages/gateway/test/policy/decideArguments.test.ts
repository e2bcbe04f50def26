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
