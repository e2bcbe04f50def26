// Found while writing this suite (not in issue 11's list): on the legacy SSE front over an HTTP
// upstream, the bridge's own tools/list (fetch on miss) waits for its answer in PendingReplies
// *before* sending; when the send itself fails (the SDK transport throws on an answer it refuses,
// e.g. `Content-Type: Application/JSON`), that wait is never awaited, and when the session ends
// rejectAll rejects it: an unhandled rejection, which ends a Node 20 process. Proven here on the
// real `toolpin serve` process.
import { spawnGateway, writeGatewayFiles, type GatewayProcess } from '../operate/gatewayProcess.js';
import { pinFor } from '../support/pinFor.js';
import { answerText, envelopeText } from './support/framing.js';
import { lenientMessages } from './support/lenientRead.js';
import { startMaliciousUpstream, type MaliciousUpstream } from './support/maliciousUpstream.js';
import { exchangeRaw, RawConnection, rawPost, rawRequest } from './support/rawClient.js';
import { PINNED_TOOLS } from './support/tools.js';

describe('containment: a malicious upstream behind the legacy SSE front cannot end toolpin serve', () => {
  let upstream: MaliciousUpstream;
  let gateway: GatewayProcess;
  let remove: () => Promise<void>;

  beforeAll(async () => {
    upstream = await startMaliciousUpstream();
    upstream.catalog = 'drifted';
    upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/list') return false;
      answerText(res, 'Application/JSON', envelopeText(message.id, { tools: upstream.tools() }));
      return true;
    };
    const files = await writeGatewayFiles([pinFor('mal', upstream.url, PINNED_TOOLS)]);
    remove = files.remove;
    gateway = await spawnGateway(files.file);
  }, 20_000);
  afterAll(async () => {
    await gateway?.kill();
    await upstream?.close();
    await remove?.();
  });

  it('refuses the call, and survives the client leaving while its own listing failed', async () => {
    const url = `${gateway.url}/mal/sse`;
    const stream = await RawConnection.open(url);
    stream.write(rawRequest('GET', url, [['Accept', 'text/event-stream']]));
    await stream.waitFor((c) => /event: endpoint\r?\ndata: [^\r\n]+/.test(c.received), 'the endpoint event');
    const post = new URL(/event: endpoint\r?\ndata: ([^\r\n]+)/.exec(stream.received)?.[1] ?? '', url).href;
    const ids = (): unknown[] =>
      lenientMessages(stream.responses[0]?.body ?? '').map((message) => (message as { id?: unknown }).id);
    const send = (message: unknown): Promise<unknown> =>
      exchangeRaw(post, rawPost(post, JSON.stringify(message)));
    await send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    await stream.waitFor((c) => ids().includes('init') || c.closed, 'the initialize answer');
    await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // No listing yet: the call makes the bridge list on its own, and the upstream's answer fails that send.
    await send({
      jsonrpc: '2.0',
      id: 'call',
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x' } },
    });
    await stream.waitFor(() => ids().includes('call'), 'the call to be answered');
    const answer = lenientMessages(stream.responses[0]?.body ?? '').find(
      (message) => (message as { id?: unknown }).id === 'call',
    );
    expect(answer).toEqual(expect.objectContaining({ error: expect.objectContaining({ code: -32040 }) }));
    expect(upstream.executed).toEqual([]);

    stream.close();
    await gateway.waitForEvent('session.ended');
    // Still serving: a new legacy stream opens (a crashed process refuses the connection).
    const again = await RawConnection.open(url).catch((error: Error) => error);
    expect(again).toBeInstanceOf(RawConnection);
    if (again instanceof RawConnection) {
      again.write(rawRequest('GET', url, [['Accept', 'text/event-stream']]));
      await again.waitFor(
        (c) => c.received.includes('event: endpoint') || c.closed,
        'a second endpoint event',
      );
      expect(again.received).toContain('event: endpoint');
      again.close();
    }
    const exitedEarly = await Promise.race([gateway.exited.then(() => true), Promise.resolve(false)]);
    expect(exitedEarly).toBe(false);
  }, 20_000);
});
