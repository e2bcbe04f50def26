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
  drift: [{ kind: 'changed', key: 'tool:echo', tool: 'echo', pinned: 'sha256:a', observed }],
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
});
