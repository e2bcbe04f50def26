import http from 'node:http';
import { pino } from 'pino';
import { listenDrainable } from '../../src/ingress/drainableServer.js';
import { OpenStreams } from '../../src/observe/openStreams.js';

const logger = pino({ level: 'silent' });

/** A GET with its own connection (no keep-alive pool): resolves with status and body, or the error code. */
function get(url: string): Promise<{ status: number; body: string } | string> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve('aborted'));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

describe('listenDrainable', () => {
  it('lets an in-flight request finish, then closes; new connections are refused meanwhile', async () => {
    let finish: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    const server = await listenDrainable(
      (_req, res) => {
        arrived();
        finish = () => res.end('done');
      },
      '127.0.0.1',
      0,
    );
    const pending = get(`${server.url}/slow`);
    await inFlight;
    expect(server.inflight).toBe(1);
    const drained = server.drain({ graceMs: 10_000, streams: new OpenStreams(), logger });
    expect(await get(`${server.url}/late`)).toBe('ECONNREFUSED');
    finish();
    expect(await pending).toEqual({ status: 200, body: 'done' });
    expect(await drained).toEqual({ drained: true, forced: 0 });
  });

  it('ends listening streams at once, and closes what is left when the grace period is over', async () => {
    const streams = new OpenStreams();
    const ended: string[] = [];
    let arrivals = 0;
    let bothArrived: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (bothArrived = resolve));
    const server = await listenDrainable(
      (req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': open\n\n');
        const kind = req.url === '/listen' ? 'listen' : 'response';
        const release = streams.add({ server: 'demo', kind, end: () => (ended.push(kind), res.end()) });
        res.once('close', release);
        if (++arrivals === 2) bothArrived();
      },
      '127.0.0.1',
      0,
    );
    const listen = get(`${server.url}/listen`);
    const stuck = get(`${server.url}/stuck`);
    await arrived;
    const result = await server.drain({ graceMs: 50, streams, logger });
    expect(result).toEqual({ drained: false, forced: 1 });
    // The listening stream ended cleanly (a complete body); the stuck response was ended at the deadline.
    expect(await listen).toEqual({ status: 200, body: ': open\n\n' });
    expect(ended).toEqual(['listen', 'response']);
    expect(await stuck).toEqual({ status: 200, body: ': open\n\n' });
    expect(streams.size).toBe(0);
  });
});
