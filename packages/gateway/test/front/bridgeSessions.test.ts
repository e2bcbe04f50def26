import { BridgeSessions, credentialOf, type EndableSession } from '../../src/front/bridgeSessions.js';
import type { BridgeEnd } from '../../src/transports/messageBridge.js';

/** A session that records being closed and reports its end like a bridge does. */
class RecordedSession implements EndableSession {
  onclose?: ((endedBy: BridgeEnd) => void) | undefined;
  closed = 0;

  close(): Promise<void> {
    this.closed += 1;
    this.onclose?.('gateway');
    return Promise.resolve();
  }
}

const headers = { authorization: 'Bearer alice' };

function entry(session: RecordedSession): { bridge: RecordedSession; front: string; credential: string } {
  return { bridge: session, front: 'front', credential: credentialOf(headers) };
}

describe('BridgeSessions', () => {
  const options = { max: 2, idleMs: 60_000 };

  it('counts sessions being opened against the bound, and gives their room back when they fail', () => {
    const sessions = new BridgeSessions<string>(options);
    const first = sessions.reserve();
    const second = sessions.reserve();
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(sessions.reserve()).toBeUndefined();
    second?.release();
    expect(sessions.reserve()).toBeDefined();
  });

  it('registers a filled slot once, finds it by id and credential, and forgets it when it ends', async () => {
    const sessions = new BridgeSessions<string>(options);
    const session = new RecordedSession();
    const slot = sessions.reserve();
    expect(slot?.fill('a', entry(session))).toBe(true);
    expect(slot?.fill('a', entry(session))).toBe(false);
    expect(sessions.get('a', headers)?.bridge).toBe(session);
    expect(sessions.get('a', { authorization: 'Bearer mallory' })).toBeUndefined();
    await session.close();
    expect(sessions.get('a', headers)).toBeUndefined();
    expect(sessions.size).toBe(0);
  });

  it('closes a session whose opening outlived closeAll instead of keeping it', async () => {
    const sessions = new BridgeSessions<string>(options);
    const live = new RecordedSession();
    sessions.reserve()?.fill('live', entry(live));
    const opening = sessions.reserve();
    await sessions.closeAll();
    expect(live.closed).toBe(1);
    const late = new RecordedSession();
    expect(opening?.fill('late', entry(late))).toBe(false);
    expect(late.closed).toBe(1);
    expect(sessions.size).toBe(0);
    expect(sessions.reserve()).toBeUndefined();
  });
});
