import { pino } from 'pino';
import { AlertWebhooks } from '../../src/observe/alertWebhooks.js';
import type { AlertEvent } from '../../src/observe/alerts.js';
import { DriftAcknowledgements } from '../../src/observe/driftAcknowledgements.js';
import { ItemActivity } from '../../src/observe/itemActivity.js';

const finding = (key: string, observed: string) =>
  ({ kind: 'changed', key, tool: key.slice(5), pinned: 'sha256:a', observed, severity: 'high' }) as const;
const drift = (
  ...findings: ReturnType<typeof finding>[]
): Extract<AlertEvent, { event: 'catalog.drift' }> => ({
  event: 'catalog.drift',
  server: 'demo',
  session: 's',
  mode: 'enforce',
  drift: findings,
});

describe('DriftAcknowledgements', () => {
  it('covers a drift event only when every finding, with its observed digest, was kept blocked', () => {
    const acks = new DriftAcknowledgements();
    acks.acknowledge('demo', finding('tool:echo', 'sha256:b'));
    expect(acks.covers(drift(finding('tool:echo', 'sha256:b')))).toBe(true);
    expect(acks.covers(drift(finding('tool:echo', 'sha256:c')))).toBe(false);
    expect(acks.covers(drift(finding('tool:echo', 'sha256:b'), finding('tool:add', 'sha256:b')))).toBe(false);
    expect(acks.covers({ ...drift(finding('tool:echo', 'sha256:b')), server: 'other' })).toBe(false);
    expect(acks.covers({ ...drift(finding('tool:echo', 'sha256:b')), findingsOmitted: 1 })).toBe(false);
  });

  it('stops an acknowledged drift from reaching the webhooks, and lets it through once it changes again', () => {
    const acks = new DriftAcknowledgements();
    const outcomes: string[] = [];
    const hooks = new AlertWebhooks({
      gateway: {
        webhooks: [
          {
            url: 'http://127.0.0.1:9/unused',
            secret: 'test-secret-0123456789',
            events: ['catalog.drift'],
            maxAttempts: 1,
            timeoutMs: 100,
            queueSize: 10,
          },
        ],
      },
      serverAlerts: () => undefined,
      logger: pino({ level: 'silent' }),
      onOutcome: (_webhook, outcome) => outcomes.push(outcome),
      acknowledged: (event) => acks.covers(event),
    });
    acks.acknowledge('demo', finding('tool:echo', 'sha256:b'));
    hooks.send(drift(finding('tool:echo', 'sha256:b')));
    expect(outcomes).toEqual(['suppressed']);
    const queued = () => [...hooks.queues().values()].reduce((sum, depth) => sum + depth, 0);
    expect(queued()).toBe(0);
    hooks.send(drift(finding('tool:echo', 'sha256:c')));
    expect(outcomes).toEqual(['suppressed']);
    expect(queued()).toBe(1);
    return hooks.close(0);
  });
});

describe('ItemActivity', () => {
  it('counts allowed, flagged and refused calls per name, and the first sighting of each drifted definition', () => {
    const activity = new ItemActivity();
    activity.recordAllowed('demo', 'echo');
    const decision = {
      reason: 'tool_drifted',
      server: 'demo',
      tool: 'echo',
      key: 'tool:echo',
      pinned: null,
      observed: null,
    } as const;
    activity.recordAlert({ event: 'call.flagged', server: 'demo', session: 's', id: 1, decision });
    activity.recordAlert({ event: 'call.blocked', server: 'demo', session: 's', id: 2, decision });
    expect(activity.callsOf('demo', 'echo')).toEqual({ allowed: 2, refused: 1 });
    expect(activity.callsOf('demo', 'add')).toEqual({ allowed: 0, refused: 0 });
    activity.recordAlert(drift(finding('tool:echo', 'sha256:b')));
    const first = activity.firstSeen('demo', finding('tool:echo', 'sha256:b'));
    expect(first).toMatch(/^\d{4}-\d\d-\d\dT/);
    activity.recordAlert(drift(finding('tool:echo', 'sha256:b')));
    expect(activity.firstSeen('demo', finding('tool:echo', 'sha256:b'))).toBe(first);
    expect(activity.firstSeen('demo', finding('tool:echo', 'sha256:c'))).toBeUndefined();
  });
});
