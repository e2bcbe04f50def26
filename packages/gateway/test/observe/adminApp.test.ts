import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminApp, type ReadinessReport } from '../../src/observe/adminApp.js';
import { GatewayMetrics } from '../../src/observe/metrics.js';

const metrics = new GatewayMetrics({
  sessions: () => 5,
  streams: () => new Map(),
  pins: () => [],
  webhookQueues: () => new Map(),
});

async function serve(
  token: string | undefined,
  readiness: () => ReadinessReport,
): Promise<{ url: string; close: () => Promise<void> }> {
  const app = createAdminApp({
    ...(token === undefined ? {} : { token }),
    metrics,
    readiness,
    status: () => ({ servers: [] }),
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('admin app', () => {
  it('serves healthz, readyz (503 until ready), metrics and status without a token when none is set', async () => {
    let state: ReadinessReport['state'] = 'starting';
    const admin = await serve(undefined, () => ({ ready: state === 'ready', state }));
    try {
      expect((await fetch(`${admin.url}/healthz`)).status).toBe(200);
      const starting = await fetch(`${admin.url}/readyz`);
      expect(starting.status).toBe(503);
      expect(await starting.json()).toEqual({ ready: false, state: 'starting' });
      state = 'ready';
      expect((await fetch(`${admin.url}/readyz`)).status).toBe(200);
      const scrape = await fetch(`${admin.url}/metrics`);
      expect(scrape.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await scrape.text()).toContain('toolpin_active_sessions 5');
      expect(await (await fetch(`${admin.url}/status`)).json()).toEqual({ servers: [] });
      expect((await fetch(`${admin.url}/nope`)).status).toBe(404);
    } finally {
      await admin.close();
    }
  });

  it('requires the bearer token on every endpoint when one is set', async () => {
    const admin = await serve('admin-token-123', () => ({ ready: true, state: 'ready' }));
    try {
      for (const path of ['/healthz', '/readyz', '/metrics', '/status']) {
        const anonymous = await fetch(`${admin.url}${path}`);
        expect(anonymous.status).toBe(401);
        expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="toolpin-admin"');
        expect(
          (await fetch(`${admin.url}${path}`, { headers: { authorization: 'Bearer wrong-token' } })).status,
        ).toBe(401);
        expect(
          (await fetch(`${admin.url}${path}`, { headers: { authorization: 'Bearer admin-token-123x' } }))
            .status,
        ).toBe(401);
        expect(
          (await fetch(`${admin.url}${path}`, { headers: { authorization: 'Bearer admin-token-123' } }))
            .status,
        ).toBe(200);
      }
    } finally {
      await admin.close();
    }
  });
});
