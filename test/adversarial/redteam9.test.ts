import { callRequest } from '../support/rawMcp.js';
import { hangForever } from './support/maliciousUpstream.js';
import { RawConnection, rawPost } from './support/rawClient.js';
import { openSession, startRig } from './support/rig.js';

// Red team 9: the intrusive LiveList under the deadline wheel and the open-stream registry, the
// in-flight count of graceful shutdown (7252f7e), the length prefilter of the listing replay
// (9bd4cdd), the SSE relay completing the headers object it is given and the upstream body sent
// as a string (74940b6).

/** The text argument of a tools/call the upstream received (undefined for any other request). */
function callText(message: Record<string, unknown>): string | undefined {
  if (message.method !== 'tools/call') return undefined;
  const args = (message.params as { arguments?: { text?: unknown } } | undefined)?.arguments;
  return typeof args?.text === 'string' ? args.text : undefined;
}

/** Resolves once `done` holds (polled every 10 ms), rejects after `waitMs`. */
async function until(done: () => boolean, what: string, waitMs = 5000): Promise<void> {
  for (const end = Date.now() + waitMs; !done();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('redteam9: in-flight responses are a count (7252f7e): it must neither stick nor go negative', () => {
  it('attack: pipelined requests behind a hung one, then the client leaves: shutdown does not wait for them', async () => {
    const rig = await startRig();
    try {
      rig.upstream.behaviour = ({ res, message }) => {
        if (callText(message) !== 'hang') return false;
        hangForever(res);
        return true;
      };
      const session = await openSession(rig.endpoint);
      const headers = Object.entries(session);
      // One connection, three requests written at once: node runs the handler of each at once, and
      // queues the responses of the second and third behind the first (HTTP/1.1 pipelining).
      const connection = await RawConnection.open(rig.endpoint);
      const mark = rig.upstream.requests.length;
      connection.write(
        Buffer.concat(
          ['hang', 'p2', 'p3'].map((text) =>
            rawPost(rig.endpoint, JSON.stringify(callRequest(text, 'echo', { text })), headers),
          ),
        ),
      );
      // The gateway may list first (its own tools/list); the three calls all reach the upstream.
      const calls = (): number =>
        rig.upstream.requests.slice(mark).filter((r) => r.messages[0]?.method === 'tools/call').length;
      await until(() => calls() === 3, 'the three calls upstream');
      // p2 and p3 are answered by the upstream; their responses wait behind the hung one.
      await until(() => rig.upstream.executed.length >= 2, 'p2 and p3 executed');
      connection.close();
      await connection.whenClosed();
      // Nothing of that connection is in flight any more: shutdown has nothing to wait for.
      await rig.gateway.running.close({ graceMs: 4000 });
      expect(rig.gateway.events('gateway.drain_timeout')).toEqual([]);
    } finally {
      await rig.close().catch(() => undefined);
    }
  });
});
