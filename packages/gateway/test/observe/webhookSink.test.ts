import { Writable } from 'node:stream';
import { createLogger } from '../../src/observe/logger.js';
import { verifyWebhookSignature } from '../../src/observe/signWebhook.js';
import { WebhookSink, type WebhookOutcome } from '../../src/observe/webhookSink.js';
import type { WebhookEvent } from '../../src/observe/webhookEvent.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhookReceiver.js';

const SECRET = 'test-secret-0123456789';

function blocked(id: number): WebhookEvent {
  return {
    event: 'call.blocked',
    server: 'demo',
    session: 'abc123',
    id,
    count: 1,
    decision: {
      reason: 'tool_drifted',
      server: 'demo',
      tool: 'echo',
      key: 'tool:echo',
      pinned: 'sha256:aa',
      observed: 'sha256:bb',
    },
  };
}

function capture(): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines };
}

describe('WebhookSink', () => {
  let receiver: WebhookReceiver | undefined;
  let sink: WebhookSink | undefined;
  afterEach(async () => {
    await sink?.close();
    await receiver?.close();
    sink = undefined;
    receiver = undefined;
  });

  it('POSTs the event as JSON signed with HMAC-SHA256 of the exact body, with a timestamp', async () => {
    receiver = await startWebhookReceiver();
    const { logger } = capture();
    sink = new WebhookSink({ name: 'hooks', url: receiver.url, secret: SECRET, logger });
    const now = new Date('2026-08-01T03:00:00.000Z');
    expect(sink.enqueue(blocked(7), now)).toBe(true);
    await receiver.waitFor(1);
    const [delivery] = receiver.received;
    expect(delivery).toBeDefined();
    if (delivery === undefined) return;
    expect(
      verifyWebhookSignature(delivery.body, SECRET, delivery.headers['x-toolpin-signature'] as string),
    ).toBe(true);
    expect(
      verifyWebhookSignature(
        delivery.body,
        'another-secret-0123456',
        delivery.headers['x-toolpin-signature'] as string,
      ),
    ).toBe(false);
    expect(delivery.headers['x-toolpin-timestamp']).toBe(String(now.getTime() / 1000));
    expect(delivery.headers['x-toolpin-event']).toBe('call.blocked');
    expect(delivery.headers['content-type']).toBe('application/json');
    const body = JSON.parse(delivery.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      event: 'call.blocked',
      server: 'demo',
      id: 7,
      time: now.toISOString(),
      decision: { reason: 'tool_drifted', tool: 'echo' },
    });
    expect(body.delivery).toBe(delivery.headers['x-toolpin-delivery']);
  });

  it('retries on HTTP 500 with backoff and delivers the same signed body', async () => {
    receiver = await startWebhookReceiver((n) => (n <= 2 ? 500 : 200));
    const outcomes: WebhookOutcome[] = [];
    sink = new WebhookSink({
      name: 'hooks',
      url: receiver.url,
      secret: SECRET,
      logger: capture().logger,
      baseDelayMs: 5,
      onOutcome: (o) => outcomes.push(o),
    });
    sink.enqueue(blocked(1));
    await sink.whenIdle();
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.headers['x-toolpin-delivery'])).size).toBe(1);
    expect(outcomes).toEqual(['retried', 'retried', 'delivered']);
  });

  it('gives up after maxAttempts on 5xx, and at once on a 4xx, logging the failure', async () => {
    receiver = await startWebhookReceiver((n) => (n <= 3 ? 503 : 400));
    const { logger, lines } = capture();
    const outcomes: WebhookOutcome[] = [];
    sink = new WebhookSink({
      name: 'hooks',
      url: receiver.url,
      secret: SECRET,
      logger,
      maxAttempts: 3,
      baseDelayMs: 2,
      onOutcome: (o) => outcomes.push(o),
    });
    sink.enqueue(blocked(1));
    sink.enqueue(blocked(2));
    await sink.whenIdle();
    expect(receiver.received).toHaveLength(4);
    expect(outcomes).toEqual(['retried', 'retried', 'failed', 'failed']);
    const failures = lines.filter((line) => line.event === 'webhook.failed');
    expect(failures.map((line) => [line.attempt, line.status])).toEqual([
      [3, 503],
      [1, 400],
    ]);
    // The URL's path is often the secret of a webhook: it never reaches the log.
    expect(JSON.stringify(lines)).not.toContain('secret-path');
    expect(JSON.stringify(lines)).not.toContain(SECRET);
  });

  it('retries on a network error (nothing listening)', async () => {
    receiver = await startWebhookReceiver();
    const url = receiver.url;
    await receiver.close();
    receiver = undefined;
    const outcomes: WebhookOutcome[] = [];
    sink = new WebhookSink({
      name: 'hooks',
      url,
      secret: SECRET,
      logger: capture().logger,
      maxAttempts: 2,
      baseDelayMs: 2,
      onOutcome: (o) => outcomes.push(o),
    });
    sink.enqueue(blocked(1));
    await sink.whenIdle();
    expect(outcomes).toEqual(['retried', 'failed']);
  });

  it('drops events beyond a full queue without waiting, counting and logging each', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<number>((resolve) => (release = () => resolve(204)));
    receiver = await startWebhookReceiver(() => held);
    const { logger, lines } = capture();
    const outcomes: WebhookOutcome[] = [];
    sink = new WebhookSink({
      name: 'hooks',
      url: receiver.url,
      secret: SECRET,
      logger,
      queueSize: 2,
      onOutcome: (o) => outcomes.push(o),
    });
    // The first is taken by the worker at once; two wait; the rest find the queue full.
    const accepted = [1, 2, 3, 4, 5].map((id) => sink?.enqueue(blocked(id)));
    expect(accepted).toEqual([true, true, true, false, false]);
    expect(sink.depth).toBe(3);
    expect(outcomes).toEqual(['dropped', 'dropped']);
    expect(lines.filter((line) => line.event === 'webhook.dropped').map((line) => line.alert)).toEqual([
      'call.blocked',
      'call.blocked',
    ]);
    release();
    await sink.whenIdle();
    expect(receiver.received.map((r) => (JSON.parse(r.body) as { id: number }).id)).toEqual([1, 2, 3]);
  });

  it('lets a drift evict the newest call event from a full queue, hands it to onShed, and delivers the drift first', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<number>((resolve) => (release = () => resolve(204)));
    receiver = await startWebhookReceiver(() => held);
    const { logger, lines } = capture();
    const outcomes: WebhookOutcome[] = [];
    const shed: WebhookEvent[] = [];
    sink = new WebhookSink({
      name: 'hooks',
      url: receiver.url,
      secret: SECRET,
      logger,
      queueSize: 2,
      onOutcome: (o) => outcomes.push(o),
      onShed: (event) => {
        shed.push(event);
        return event.event === 'call.blocked';
      },
    });
    const drift = (observed: string): WebhookEvent => ({
      event: 'catalog.drift',
      server: 'demo',
      session: 's',
      mode: 'enforce',
      drift: [
        { kind: 'changed', key: 'tool:echo', tool: 'echo', pinned: 'sha256:a', observed, severity: 'high' },
      ],
    });
    // 1 is being delivered (held); 2 and 3 fill the queue; 4 is shed.
    expect([1, 2, 3, 4].map((id) => sink?.enqueue(blocked(id)))).toEqual([true, true, true, false]);
    expect(sink.enqueue(drift('sha256:b'))).toBe(true);
    expect(sink.enqueue(drift('sha256:c'))).toBe(true);
    // Full of drift: a third drift is refused, never a drift evicted for it, and it is lost.
    expect(sink.enqueue(drift('sha256:d'))).toBe(false);
    expect(shed.map((event) => ('id' in event ? event.id : event.event))).toEqual([4, 3, 2, 'catalog.drift']);
    expect(outcomes).toEqual(['carried', 'carried', 'carried', 'dropped']);
    expect(lines.filter((line) => line.event === 'webhook.dropped')).toEqual([
      expect.objectContaining({ alert: 'catalog.drift', why: 'full', webhook: 'hooks' }),
    ]);
    release();
    await sink.whenIdle();
    expect(
      receiver.received.map((r) => {
        const body = JSON.parse(r.body) as { id?: number; drift?: { observed: string }[] };
        return body.id ?? body.drift?.[0]?.observed;
      }),
    ).toEqual([1, 'sha256:b', 'sha256:c']);
  });

  it('close() abandons what the grace period could not deliver', async () => {
    receiver = await startWebhookReceiver(() => new Promise<number>(() => undefined));
    const { logger, lines } = capture();
    sink = new WebhookSink({ name: 'hooks', url: receiver.url, secret: SECRET, logger });
    sink.enqueue(blocked(1));
    sink.enqueue(blocked(2));
    await receiver.waitFor(1);
    expect(await sink.close(10)).toBe(2);
    expect(lines.find((line) => line.event === 'webhook.abandoned')).toMatchObject({ count: 2 });
    expect(sink.enqueue(blocked(3))).toBe(false);
  });
});
