import { CallWindows } from '../../src/observe/callWindows.js';
import type { DenyReason } from '../../src/policy/decision.js';
import type { AggregatedCallEvent, CallAlertEvent } from '../../src/observe/webhookEvent.js';

function blocked(tool: string, session = 's1', reason: DenyReason = 'tool_drifted'): CallAlertEvent {
  return {
    event: 'call.blocked',
    server: 'demo',
    session,
    id: 1,
    decision: { reason, server: 'demo', tool, key: `tool:${tool}`, pinned: null, observed: null },
  };
}

/** Windows long enough never to end by themselves within a test: close() ends them. */
function windows(maxWindows?: number): { calls: CallWindows; sent: AggregatedCallEvent[] } {
  const sent: AggregatedCallEvent[] = [];
  const calls = new CallWindows({
    windowMs: 3_600_000,
    deliver: (event) => sent.push(event),
    ...(maxWindows === undefined ? {} : { maxWindows }),
  });
  return { calls, sent };
}

describe('CallWindows', () => {
  it('lets the first call of a server, tool and reason out at once and counts the rest into one event', () => {
    const { calls, sent } = windows();
    const t0 = Date.parse('2026-08-01T03:00:00.000Z');
    expect(calls.admit(blocked('echo'), t0)).toBe(true);
    expect(calls.admit(blocked('add'), t0)).toBe(true);
    expect(calls.admit(blocked('echo', 's1', 'tool_not_pinned'), t0)).toBe(true);
    for (let i = 1; i <= 40; i++) expect(calls.admit(blocked('echo', `s${i % 3}`), t0 + i)).toBe(false);
    expect(sent).toEqual([]);
    calls.close();
    expect(sent).toEqual([
      {
        event: 'call.blocked',
        server: 'demo',
        tool: 'echo',
        reason: 'tool_drifted',
        count: 40,
        sessions: ['s1', 's2', 's0'],
        window: { first: '2026-08-01T03:00:00.001Z', last: '2026-08-01T03:00:00.040Z' },
        decision: expect.objectContaining({ tool: 'echo', reason: 'tool_drifted' }),
        aggregated: true,
      },
    ]);
  });

  it('sends one event per window while a flood lasts, and the first call at once again once a window counted none', async () => {
    const sent: AggregatedCallEvent[] = [];
    let ended: () => void = () => undefined;
    const calls = new CallWindows({
      windowMs: 5,
      deliver: (event) => {
        sent.push(event);
        ended();
      },
    });
    expect(calls.admit(blocked('echo'))).toBe(true);
    expect(calls.admit(blocked('echo'))).toBe(false);
    await new Promise<void>((resolve) => (ended = resolve));
    // The window that counted one call was followed by another: this call is counted in it.
    expect(calls.admit(blocked('echo'))).toBe(false);
    await new Promise<void>((resolve) => (ended = resolve));
    expect(sent.map((event) => event.count)).toEqual([1, 1]);
    // The window after it counts nothing and closes; a timer due later fires after it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls.admit(blocked('echo'))).toBe(true);
    calls.close();
    expect(sent).toHaveLength(2);
  });

  it('carries the count of a shed event back into its window', () => {
    const { calls, sent } = windows();
    expect(calls.admit(blocked('echo'), 1000)).toBe(true);
    expect(calls.carry({ ...blocked('echo', 's9'), count: 1 }, 1000)).toBe(true);
    expect(
      calls.carry({
        event: 'call.blocked',
        server: 'demo',
        tool: 'add',
        reason: 'tool_drifted',
        count: 7,
        sessions: ['s4'],
        window: { first: new Date(500).toISOString(), last: new Date(900).toISOString() },
        decision: blocked('add').decision,
        aggregated: true,
      }),
    ).toBe(true);
    calls.close();
    expect(sent.map((event) => [event.tool, event.count, event.sessions, event.window.first])).toEqual([
      ['echo', 1, ['s9'], new Date(1000).toISOString()],
      ['add', 7, ['s4'], new Date(500).toISOString()],
    ]);
    // After close nothing is carried: the caller logs the loss.
    expect(calls.carry({ ...blocked('echo'), count: 1 })).toBe(false);
  });

  it('folds the tools past the window limit into one window per server and reason (tool null)', () => {
    const { calls, sent } = windows(2);
    expect(calls.admit(blocked('a'))).toBe(true);
    expect(calls.admit(blocked('b'))).toBe(true);
    // The limit is reached: every other tool name shares one window; the first of it goes out.
    expect(calls.admit(blocked('c'))).toBe(true);
    for (let i = 0; i < 500; i++) expect(calls.admit(blocked(`invented-${i}`))).toBe(false);
    expect(calls.admit(blocked('a'))).toBe(false);
    calls.close();
    expect(sent.map((event) => [event.tool, event.count])).toEqual([
      ['a', 1],
      [null, 500],
    ]);
  });
});
