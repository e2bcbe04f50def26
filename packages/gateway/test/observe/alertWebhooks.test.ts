import { pino } from 'pino';
import type { AlertsConfig, WebhookConfig } from '../../src/config/index.js';
import { AlertWebhooks } from '../../src/observe/alertWebhooks.js';
import type { AlertEvent } from '../../src/observe/alerts.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhookReceiver.js';

const silent = pino({ level: 'silent' });

function webhook(url: string, overrides: Partial<WebhookConfig> = {}): WebhookConfig {
  return {
    url,
    secret: 'test-secret-0123456789',
    events: ['catalog.drift', 'call.blocked', 'call.flagged'],
    maxAttempts: 1,
    timeoutMs: 2000,
    queueSize: 10,
    ...overrides,
  };
}

const drift = (server: string, observed: string): AlertEvent => ({
  event: 'catalog.drift',
  server,
  session: 's',
  mode: 'enforce',
  drift: [
    { kind: 'changed', key: 'tool:echo', tool: 'echo', pinned: 'sha256:a', observed, severity: 'high' },
  ],
});
const blocked = (
  tool: string,
  id: number,
  reason: 'tool_drifted' | 'tool_not_pinned' = 'tool_drifted',
): AlertEvent => ({
  event: 'call.blocked',
  server: 'demo',
  session: `s${id % 4}`,
  id,
  decision: { reason, server: 'demo', tool, key: `tool:${tool}`, pinned: null, observed: null },
});
const verified = (server: string): AlertEvent => ({
  event: 'catalog.verified',
  server,
  session: 's',
  catalog: 'sha256:a',
  tools: 1,
});

function events(receiver: WebhookReceiver): string[] {
  return receiver.received.map((r) => {
    const body = JSON.parse(r.body) as { event: string; server: string };
    return `${body.event} ${body.server}`;
  });
}

describe('AlertWebhooks', () => {
  let gatewayHook: WebhookReceiver;
  let serverHook: WebhookReceiver;
  let hooks: AlertWebhooks | undefined;
  beforeEach(async () => {
    gatewayHook = await startWebhookReceiver();
    serverHook = await startWebhookReceiver();
  });
  afterEach(async () => {
    await hooks?.close();
    await gatewayHook.close();
    await serverHook.close();
  });

  it("sends each event to the gateway's webhooks and to its own server's, filtered by events", async () => {
    const perServer: Record<string, AlertsConfig> = {
      demo: { webhooks: [webhook(serverHook.url, { events: ['catalog.verified'] })] },
    };
    hooks = new AlertWebhooks({
      gateway: { webhooks: [webhook(gatewayHook.url)], dedupeSeconds: 0 },
      serverAlerts: (name) => perServer[name],
      logger: silent,
    });
    hooks.send(verified('demo'));
    hooks.send(drift('demo', 'sha256:b'));
    hooks.send(drift('other', 'sha256:b'));
    hooks.send(verified('other'));
    await hooks.whenIdle();
    expect(events(gatewayHook)).toEqual(['catalog.drift demo', 'catalog.drift other']);
    expect(events(serverHook)).toEqual(['catalog.verified demo']);
  });

  it('limits a webhook to high severity: low findings left out, an all-low drift and low-drift calls not sent', async () => {
    hooks = new AlertWebhooks({
      gateway: {
        webhooks: [webhook(gatewayHook.url, { minSeverity: 'high' }), webhook(serverHook.url)],
        dedupeSeconds: 0,
      },
      serverAlerts: () => undefined,
      logger: silent,
    });
    const low = {
      kind: 'changed',
      key: 'tool:add',
      tool: 'add',
      pinned: 'sha256:c',
      observed: 'sha256:d',
      severity: 'low',
    } as const;
    const mixed = drift('demo', 'sha256:b');
    if (mixed.event !== 'catalog.drift') throw new Error('a drift event');
    hooks.send({ ...mixed, drift: [...mixed.drift, low] });
    hooks.send({ ...mixed, server: 'other', drift: [low] });
    const lowCall = blocked('add', 1);
    if (lowCall.event !== 'call.blocked') throw new Error('a call event');
    hooks.send({ ...lowCall, event: 'call.flagged', decision: { ...lowCall.decision, severity: 'low' } });
    hooks.send(blocked('echo', 2));
    await hooks.whenIdle();
    expect(events(gatewayHook)).toEqual(['catalog.drift demo', 'call.blocked demo']);
    const first = JSON.parse(gatewayHook.received[0]?.body ?? '{}') as { drift: { key: string }[] };
    expect(first.drift.map((finding) => finding.key)).toEqual(['tool:echo']);
    expect(events(serverHook)).toEqual([
      'catalog.drift demo',
      'catalog.drift other',
      'call.flagged demo',
      'call.blocked demo',
    ]);
  });

  it('sends a webhook named twice (gateway and pin file) once', async () => {
    const same = webhook(gatewayHook.url);
    hooks = new AlertWebhooks({
      gateway: { webhooks: [same], dedupeSeconds: 0 },
      serverAlerts: () => ({ webhooks: [same] }),
      logger: silent,
    });
    hooks.send(drift('demo', 'sha256:b'));
    await hooks.whenIdle();
    expect(gatewayHook.received).toHaveLength(1);
  });

  it('suppresses a repeat of the same drift within the window, counted as suppressed; a new drift or a recovery goes out', async () => {
    const outcomes: string[] = [];
    hooks = new AlertWebhooks({
      gateway: { webhooks: [webhook(gatewayHook.url)], dedupeSeconds: 300 },
      serverAlerts: () => undefined,
      logger: silent,
      onOutcome: (name, outcome) => outcomes.push(`${name} ${outcome}`),
    });
    const t0 = 1_000_000;
    hooks.send(drift('demo', 'sha256:b'), t0);
    hooks.send(drift('demo', 'sha256:b'), t0 + 1000);
    hooks.send(drift('demo', 'sha256:c'), t0 + 2000);
    hooks.send(verified('demo'), t0 + 3000);
    hooks.send(drift('demo', 'sha256:c'), t0 + 4000);
    hooks.send(drift('demo', 'sha256:c'), t0 + 4000 + 300_000);
    await hooks.whenIdle();
    const observed = gatewayHook.received.map(
      (r) => (JSON.parse(r.body) as { drift: { observed: string }[] }).drift[0]?.observed,
    );
    expect(observed).toEqual(['sha256:b', 'sha256:c', 'sha256:c', 'sha256:c']);
    const host = new URL(gatewayHook.url).host;
    expect(outcomes.filter((o) => o.endsWith('suppressed'))).toEqual([`${host} suppressed`]);
    expect(hooks.queues().get(host)).toBe(0);
  });

  it('aggregates a flood of refused calls per tool and reason, and the drift after it still arrives', async () => {
    const outcomes: string[] = [];
    hooks = new AlertWebhooks({
      gateway: { webhooks: [webhook(gatewayHook.url, { queueSize: 10 })], dedupeSeconds: 300 },
      serverAlerts: () => undefined,
      logger: silent,
      onOutcome: (_name, outcome) => outcomes.push(outcome),
    });
    // Before aggregation, the first 11 of these filled the queue and every later event, the drift
    // included, was dropped.
    for (let id = 0; id < 1000; id++) hooks.send(blocked('echo', id));
    for (let id = 0; id < 30; id++) hooks.send(blocked('ghost', id, 'tool_not_pinned'));
    hooks.send(drift('demo', 'sha256:b'));
    expect(hooks.queues().get(new URL(gatewayHook.url).host)).toBe(3);
    // Shutdown ends the windows: their counts go out before the sinks drain.
    expect(await hooks.close(5000)).toBe(0);
    hooks = undefined;
    const bodies = gatewayHook.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(bodies.filter((body) => body.event === 'catalog.drift')).toHaveLength(1);
    const calls = bodies.filter((body) => body.event === 'call.blocked');
    const total = (tool: string): number =>
      calls
        .filter((body) => (body.tool ?? (body.decision as { tool: string }).tool) === tool)
        .reduce((sum, body) => sum + (body.count as number), 0);
    expect(total('echo')).toBe(1000);
    expect(total('ghost')).toBe(30);
    expect(calls).toHaveLength(4);
    expect(calls.find((body) => body.aggregated === true && body.tool === 'echo')).toMatchObject({
      reason: 'tool_drifted',
      count: 999,
      sessions: ['s1', 's2', 's3', 's0'],
    });
    expect(outcomes.filter((o) => o === 'dropped')).toEqual([]);
    expect(outcomes.filter((o) => o === 'aggregated')).toHaveLength(999 + 29);
  });

  it('keeps the count of call events a full queue shed, and lets the drift evict one', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<number>((resolve) => (release = () => resolve(204)));
    await gatewayHook.close();
    gatewayHook = await startWebhookReceiver(() => held);
    const outcomes: string[] = [];
    hooks = new AlertWebhooks({
      gateway: { webhooks: [webhook(gatewayHook.url, { queueSize: 2 })], dedupeSeconds: 300 },
      serverAlerts: () => undefined,
      logger: silent,
      onOutcome: (_name, outcome) => outcomes.push(outcome),
    });
    // Ten tools: the first of each goes out at once; one is being delivered (held), two wait, seven
    // are shed into their windows.
    for (let id = 0; id < 200; id++) hooks.send(blocked(`tool${id % 10}`, id, 'tool_not_pinned'));
    await gatewayHook.waitFor(1);
    hooks.send(drift('demo', 'sha256:b'));
    expect(outcomes.filter((o) => o === 'carried')).toHaveLength(7 + 1);
    release();
    await hooks.whenIdle();
    expect(await hooks.close(5000)).toBe(0);
    hooks = undefined;
    const bodies = gatewayHook.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(bodies.filter((body) => body.event === 'catalog.drift')).toHaveLength(1);
    // The drift went ahead of the call events waiting in the queue.
    expect(bodies[1]?.event).toBe('catalog.drift');
    const counts = new Map<string, number>();
    for (const body of bodies.filter((b) => b.event === 'call.blocked')) {
      const tool = (body.tool ?? (body.decision as { tool: string }).tool) as string;
      counts.set(tool, (counts.get(tool) ?? 0) + (body.count as number));
    }
    expect([...counts.entries()].sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => [`tool${i}`, 20]).sort(),
    );
    expect(outcomes.filter((o) => o === 'dropped')).toEqual([]);
  });
});
